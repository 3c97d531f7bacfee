"""The agent base taught to read code it never saw: stage 2 of the agent base, repairs of sources outside its
pre-training.

    nice -n 10 python scripts/build_agent_base.py --out models/base_agent     # stage 1, then this stage

Stage 1 (models/agent_base.py) resolves about half of the in-domain held-out bugs and none of the unseen projects'
(eval and holdout: 0 of 30 each, where a random single edit resolves 4 and 2). There its edits are recalled, not
read: it writes a SEARCH block from a project it trained on (`bisect.py`, semver's `Version`) into a graph library it
has never seen, the scaffold refuses it, and the episode submits nothing. Every repair it learned was of code it had
also read in pre-training (the train projects, the standard library subset), so writing from memory was always
right. This stage goes on training it on repairs of code it never read (`unseen_files`: the standard library's
modules outside the pre-training subset and the Python sources of the packages pyproject.toml pins exactly), where
an edit can only be copied from the code shown, mixed with stage 1's own trajectories (`unseen_share`) so that its
in-domain skill is kept. The trajectories are stage 1's shapes (`models.agent_base.trajectory`) with generic
problem statements, as the base's synthetic repairs have; no test runs, nothing downloaded, no eval or holdout code.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import math
import random
import sysconfig
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from models.agent_base import AgentBaseSettings, _default_tools, encode, toward_base, trajectory, trajectory_rows
from models.base_data import STDLIB_SKIP, SourceFile, function_mutations, repair_example, stdlib_files
from postgame.config import BootstrapSettings, Config

# Packages whose exact version pyproject.toml pins (torch==2.13.0, peft==0.21.2): their sources are the same on every
# install of this project; other installed packages vary with the resolver's day. The standard library's half varies
# with the Python release (3.11.x here), as the base's pre-training corpus does.
PINNED_PACKAGES = ("torch", "peft")
SKIP_PARTS = {"test", "tests", "testing", "_vendor", "vendor", "__pycache__"}


@dataclass(frozen=True)
class TransferSettings:
    # 1,000 steps of 8, half of them unseen code: ~0.5 epoch of its ~4,500 trajectories (BENCHMARKS.md, "Session 27").
    steps: int = 1000
    batch_size: int = 8
    learning_rate: float = 3e-4
    warmup_steps: int = 20
    unseen_share: float = 0.5  # the share of each batch drawn from unseen code; the rest is stage 1's trajectories
    mutations_per_file: int = 3
    min_file_bytes: int = 1500
    max_file_bytes: int = 40_000
    max_tokens: int = 896
    # The share of this stage kept: base + share * (trained - stage 1), stage 1's own last step (WiSE-FT).
    finetune_share: float = 0.5
    seed: int = 0
    threads: int = 2
    precision: str = "fp32"  # policy.bootstrap.precision: models.bootstrap.training_precision


def _readable(path: Path, s: TransferSettings) -> str | None:
    if not s.min_file_bytes < path.stat().st_size < s.max_file_bytes:
        return None
    try:
        text = path.read_text(encoding="utf-8")
        ast.parse(text)
    except (UnicodeDecodeError, SyntaxError, ValueError):
        return None
    return text


def unseen_files(bootstrap: BootstrapSettings, s: TransferSettings) -> list[SourceFile]:
    """Python sources the base never read, sorted: the standard library's modules outside the pre-training subset
    (`models.base_data.stdlib_files`), then the pinned packages' modules; tests and vendored code left out."""
    read = {f.path for f in stdlib_files(bootstrap)}
    out: list[SourceFile] = []
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(part in STDLIB_SKIP for part in rel.parts) or rel.as_posix() in read:
            continue
        if (text := _readable(path, s)) is not None:
            out.append(SourceFile("stdlib-unseen", "python/stdlib", rel.as_posix(), text))
    for name in PINNED_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        top = Path(next(iter(spec.submodule_search_locations)))
        for path in sorted(top.rglob("*.py")):
            rel = path.relative_to(top.parent)
            if SKIP_PARTS.intersection(rel.parts):
                continue
            if (text := _readable(path, s)) is not None:
                out.append(SourceFile(name, f"pypi/{name}", rel.as_posix(), text))
    return out


def unseen_rows(
    files: list[SourceFile], tok: Any, s: TransferSettings, tools: list[dict], shapes: AgentBaseSettings
) -> list[tuple[list[int], list[int]]]:
    """Encoded trajectories repairing up to `mutations_per_file` mutated functions of each file, in stage 1's
    shapes (`shapes`: edit, tests, submit; some recover from a wrong edit first)."""
    rng = random.Random(f"transfer:{s.seed}")
    rows = []
    for file in files:
        frng = random.Random(f"{s.seed}:{file.project}:{file.path}")
        try:
            mutations = function_mutations(file, frng, s.mutations_per_file)
        except (SyntaxError, ValueError):
            continue
        for mut in mutations:
            try:
                example = repair_example(file, mut, None, frng)
            except (SyntaxError, ValueError):
                continue
            made = trajectory(example, rng, shapes) if example is not None else None
            if made is not None and (enc := encode(tok, made[0], made[1], s.max_tokens, tools)) is not None:
                rows.append(enc)
    return rows


def content_hash(stage1_sha: str, s: TransferSettings, rows: list[tuple[list[int], list[int]]]) -> str:
    """What the stage depends on: stage 1's weights, the settings, the rows, this code and stage 1's (the
    trajectories' shapes and the last step, `toward_base`)."""
    h = hashlib.sha256(json.dumps([stage1_sha, asdict(s)]).encode())
    for ids, labels in rows:
        h.update(bytes(str(ids), "ascii") + bytes(str(labels), "ascii"))
    h.update(Path(__file__).read_bytes())
    h.update((Path(__file__).parent / "agent_base.py").read_bytes())
    return h.hexdigest()


def _batch(rows: list[tuple[list[int], list[int]]], pad: int):
    import torch
    from torch.nn.utils.rnn import pad_sequence

    ids = pad_sequence([torch.tensor(r[0]) for r in rows], batch_first=True, padding_value=pad)
    labels = pad_sequence([torch.tensor(r[1]) for r in rows], batch_first=True, padding_value=-100)
    mask = pad_sequence([torch.ones(len(r[0]), dtype=torch.long) for r in rows], batch_first=True, padding_value=0)
    return ids, labels, mask


@dataclass
class TransferBuild:
    content_hash: str
    sha256: str
    stage1: dict  # stage 1's manifest: its content hash and sha256, its trajectories and settings
    unseen_files: int
    unseen_trajectories: int
    stage1_trajectories: int
    seconds: float
    losses: dict  # per 25 steps: mean loss a token on unseen-code rows and on stage 1's rows
    settings: dict
    command: str = "POSTGAME_HOME=.postgame OMP_NUM_THREADS=2 nice -n 10 python scripts/build_agent_base.py --out models/base_agent"


def build_transfer(
    cfg: Config,
    out_dir: Path,
    *,
    stage1_dir: Path,
    settings: TransferSettings | None = None,
    say: Callable[[str], None] = lambda msg: None,
) -> TransferBuild:
    """Train stage 1's checkpoint at `stage1_dir` on unseen-code repairs mixed with its own trajectories, into
    `out_dir` (see the module docstring)."""
    import torch
    from transformers import AutoModelForCausalLM

    from models.agent import COMPACT_TEMPLATE
    from models.bootstrap import training_precision
    from models.tokenizer import load_tokenizer

    s = settings or TransferSettings()
    started = time.monotonic()
    torch.set_num_threads(s.threads)
    torch.manual_seed(s.seed)
    stage1 = json.loads((stage1_dir / "manifest.json").read_text())
    tok = load_tokenizer(stage1_dir)
    tok.chat_template = COMPACT_TEMPLATE
    tools = _default_tools()
    files = unseen_files(cfg.policy.bootstrap, s)
    shapes = AgentBaseSettings(**stage1["settings"])  # the trajectories stage 1 was built on, and their shapes
    new = unseen_rows(files, tok, s, tools, shapes)
    old, _ = trajectory_rows(cfg, tok, shapes)
    digest = content_hash(stage1["sha256"], s, new + old)
    say(f"agent base stage 2: {len(new)} repairs of {len(files)} unseen files, {len(old)} of stage 1, {s.steps} steps")
    model = AutoModelForCausalLM.from_pretrained(stage1_dir)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=s.learning_rate, weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda k: (
            min(1.0, (k + 1) / max(1, s.warmup_steps))
            * 0.5
            * (1 + math.cos(math.pi * min(k, s.steps) / max(1, s.steps)))
        ),
    )
    order = random.Random(f"transfer-batches:{s.seed}")
    losses: dict[str, list[float]] = {"unseen": [], "stage1": []}
    running: dict[bool, list[float]] = {True: [], False: []}
    for step in range(s.steps):
        picks = [order.random() < s.unseen_share for _ in range(s.batch_size)]
        rows = [(new if p else old)[order.randrange(len(new if p else old))] for p in picks]
        ids, labels, mask = _batch(rows, tok.pad_token_id)
        with training_precision(s.precision):
            logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
        target = labels[:, 1:]
        per_token = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2), target, ignore_index=-100, reduction="none"
        )
        counted = target != -100
        loss = per_token.sum() / counted.sum()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        for p, row_loss in zip(picks, (per_token.sum(1) / counted.sum(1).clamp(min=1)).tolist()):
            running[p].append(row_loss)
        if (step + 1) % 25 == 0 or step + 1 == s.steps:
            for key, p in (("unseen", True), ("stage1", False)):
                losses[key].append(round(sum(running[p]) / max(1, len(running[p])), 4))
                running[p] = []
            say(
                f"stage 2 step {step + 1}/{s.steps}: loss {losses['unseen'][-1]:.3f} unseen, "
                f"{losses['stage1'][-1]:.3f} stage 1, {time.monotonic() - started:.0f}s"
            )
    out_dir.mkdir(parents=True, exist_ok=True)
    model.eval()
    toward_base(model, AutoModelForCausalLM.from_pretrained(stage1_dir), s.finetune_share)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    build = TransferBuild(
        digest,
        hashlib.sha256((out_dir / "model.safetensors").read_bytes()).hexdigest(),
        stage1,
        len(files),
        len(new),
        len(old),
        round(time.monotonic() - started, 1),
        losses,
        asdict(s),
    )
    (out_dir / "manifest.json").write_text(json.dumps(asdict(build), indent=2, sort_keys=True) + "\n")
    return build
