"""The base policy: a small Qwen2 pre-trained on local code, then taught to answer an issue with a repair.

    postgame bootstrap [--from-scratch] [--json]              # load (or rebuild) the base, evaluate it, make it champion
    nice -n 10 python scripts/build_base.py --out models/base  # rebuild it (~70 min on 2 cores in fp32)

The recipe reads top to bottom (`build_base`):
1. data: the corpus (standard library subset + train-split seed projects, never eval or holdout), the held-out bugs
   of the factory build (dev, indomain, eval, holdout: never shown), synthetic repairs (`policy.bootstrap.
   project_repair_share` of the projects' mutants), and the train split's bugs shown with their gold answers (the
   default) or withheld (`train_split: withheld`: the pool the demo's traffic serves is then new to the base);
2. a byte-level BPE tokenizer trained on the corpus;
3. a Qwen2 from the `policy:` architecture keys, seeded;
4. three stages with one AdamW and one warmup + cosine schedule: next-token pre-training (`lm`); the curriculum
   (`curriculum`: copy a span, copy a line and edit one token, repair a mutated function); SFT on synthetic repairs
   and train-split gold (`repair`, with some pre-training replayed). The loss of an example is on its answer only;
5. the checkpoint (safetensors, tokenizer, config) and `manifest.json`: its sha256, the content hash of everything
   that shaped it, the command that rebuilds it, the data counts and the loss curve.

The content hash covers the corpus bytes, the factory build's instances, the settings, this code and the library
versions: a base whose hash matches is reused (the shipped `models/base/`, or a build cached under home) and never
rebuilt. Plain torch loops: this is pre-training, not the RL stage (models/train.py). Deterministic on CPU for the
same seed and `policy.bootstrap.threads`. The steps run in `policy.bootstrap.precision`: fp32 (the shipped recipe)
or bf16 autocast, ~1.4x faster with native bfloat16 and ~12x slower without it, which the build's first line says.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from models.base_data import (
    Example,
    SourceFile,
    copy_example,
    edit_example,
    pretraining_corpus,
    repair_data,
)
from models.policy import SHIPPED_BASE, qwen2_config, train_tokenizer
from postgame.config import Config, PolicySettings
from postgame.errors import PostgameError

MANIFEST = "manifest.json"
WEIGHTS = "model.safetensors"
REBUILD_COMMAND = "POSTGAME_HOME=.postgame OMP_NUM_THREADS=2 nice -n 10 python scripts/build_base.py --out models/base"


# The code that shapes the base; hashed as its syntax tree without docstrings, so a comment or a reworded docstring
# does not invalidate the shipped checkpoint while any change of behaviour does.
RECIPE_CODE = (
    "models/bootstrap.py",
    "models/base_data.py",
    "models/policy.py",
    "evals/prompts.py",
    "evals/factory/mutate.py",
    "scripts/build_base.py",
)
# Files of which the recipe uses only some top-level definitions: only those are in its digest (models/policy.py also
# holds how a checkpoint is loaded and served, which changes no weight).
RECIPE_PARTS = {"models/policy.py": ("SPECIAL_TOKENS", "train_tokenizer", "qwen2_config")}


def _code_digest(path: Path, names: tuple[str, ...] = ()) -> bytes:
    """The code's AST without docstrings; with `names`, only the top-level definitions of those names."""
    import ast

    tree = ast.parse(path.read_text())
    if names:
        tree.body = [node for node in tree.body if _defined(node) & set(names)]
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or not body:
            continue
        first = body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            body[:] = body[1:] or [ast.Pass()]  # in place: `body` is the node's own list
    return hashlib.sha256(ast.dump(tree).encode()).digest()


def _defined(node) -> set[str]:
    import ast

    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return {t.id for t in targets if isinstance(t, ast.Name)}


class BaseCorrupt(PostgameError):
    """A base checkpoint whose weights do not match the sha256 in its manifest."""


@dataclass
class BaseBuild:
    """What `build_base` made (and what its manifest records)."""

    content_hash: str
    sha256: str
    params: int
    bytes: int
    seconds: float
    data: dict[str, int]
    losses: dict[str, list[float]] = field(default_factory=dict)
    command: str = REBUILD_COMMAND
    settings: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------------------------
# Inputs and their hash


@dataclass(frozen=True)
class BaseInputs:
    corpus: list[SourceFile]
    train_seeds: list
    records: list[dict]  # the factory build's instances (split, mutation, statement): what must stay held out

    def content_hash(self, policy: PolicySettings) -> str:
        import tokenizers
        import torch
        import transformers

        h = hashlib.sha256()
        for f in self.corpus:
            h.update(f"{f.project}\0{f.path}\0".encode() + hashlib.sha256(f.text.encode()).digest())
        rows = sorted(
            (
                r["instance_id"],
                r["split"],
                r["mutation"].get("key") or json.dumps(r["mutation"], sort_keys=True),  # a mined bug has no key
                hashlib.sha256(r["problem_statement"].encode()).hexdigest(),
            )
            for r in self.records
        )
        h.update(json.dumps(rows).encode())
        h.update(policy.model_dump_json(exclude={"base_model", "engine", "temperature"}).encode())
        root = Path(__file__).resolve().parent.parent
        for rel in RECIPE_CODE:
            h.update(rel.encode() + _code_digest(root / rel, RECIPE_PARTS.get(rel, ())))
        h.update(f"{torch.__version__} {transformers.__version__} {tokenizers.__version__}".encode())
        return h.hexdigest()


def gather_inputs(cfg: Config) -> BaseInputs:
    """The corpus and the factory build's instances (built first if the store has none)."""
    from evals.factory.build import ensure_built
    from evals.factory.instances import load_records
    from evals.factory.seeds import default_seeds_dir, load_seeds
    from evals.factory.splits import train_projects

    ensure_built(cfg)
    seeds = load_seeds(
        Path(cfg.factory.seeds_dir) if cfg.factory.seeds_dir else default_seeds_dir(), cfg.factory.projects or None
    )
    allowed = set(train_projects([s.name for s in seeds], cfg.factory))
    train_seeds = [s for s in seeds if s.name in allowed]
    return BaseInputs(pretraining_corpus(train_seeds, cfg.policy.bootstrap), train_seeds, load_records(cfg))


# ---------------------------------------------------------------------------------------------------------------------
# Tokenised data


@dataclass
class _Data:
    lm_stdlib: list[int]
    lm_seeds: list[int]
    curriculum: list[tuple[list[int], list[int]]]
    repairs: list[tuple[list[int], list[int]]]
    gold: list[tuple[list[int], list[int]]]
    counts: dict[str, int]


def _encode_examples(tokenizer, examples: list[Example], prompt_max: int, answer_max: int):
    eos = tokenizer.eos_token_id
    prompts = tokenizer([e.prompt for e in examples], add_special_tokens=False)["input_ids"] if examples else []
    answers = tokenizer([e.completion for e in examples], add_special_tokens=False)["input_ids"] if examples else []
    out = []
    for p, a in zip(prompts, answers):
        if len(a) + 1 > answer_max:
            continue  # an answer the policy could never finish within max_new_tokens teaches the wrong length
        out.append((p[-prompt_max:], a + [eos]))
    return out


def _prepare(inputs: BaseInputs, tokenizer, policy: PolicySettings, say: Callable[[str], None]) -> _Data:
    s = policy.bootstrap
    seeds = {seed.name: seed for seed in inputs.train_seeds}
    repairs, gold, excluded = repair_data(inputs.corpus, inputs.records, seeds, s)
    rng = random.Random(f"curriculum:{s.seed}")
    code = [f for f in inputs.corpus if f.path.endswith(".py")]
    curriculum: list[Example] = []
    for n in range(len(code) * 8):
        file = code[rng.randrange(len(code))]
        make = copy_example if n % 2 == 0 else edit_example
        try:
            example = make(file, rng)
        except (SyntaxError, ValueError):
            example = None
        if example is not None:
            curriculum.append(example)
    say(
        f"data: {len(inputs.corpus)} files, {len(repairs)} synthetic repairs, {len(gold)} gold, "
        f"{len(curriculum)} copy/edit examples, {excluded} bugs left out"
    )
    eos = tokenizer.eos_token_id

    def stream(files: list[SourceFile]) -> list[int]:
        ids = tokenizer([f.text for f in files], add_special_tokens=False)["input_ids"] if files else []
        return [t for row in ids for t in [*row, eos]]

    pmax, amax = policy.max_prompt_tokens, policy.max_new_tokens
    data = _Data(
        lm_stdlib=stream([f for f in inputs.corpus if f.project == "stdlib"]),
        lm_seeds=stream([f for f in inputs.corpus if f.project != "stdlib"]),
        curriculum=_encode_examples(tokenizer, curriculum, pmax, amax),
        repairs=_encode_examples(tokenizer, repairs, pmax, amax),
        gold=_encode_examples(tokenizer, gold, pmax, amax),
        counts={},
    )
    data.counts = {
        "files": len(inputs.corpus),
        "lm_tokens_stdlib": len(data.lm_stdlib),
        "lm_tokens_seeds": len(data.lm_seeds),
        "curriculum_examples": len(data.curriculum),
        "synthetic_repairs": len(data.repairs),
        "gold_repairs": len(data.gold),
        "held_out_bugs_excluded": excluded,
    }
    return data


# ---------------------------------------------------------------------------------------------------------------------
# Batches


def _lm_batch(data: _Data, s, rng: random.Random, pad: int):
    rows = []
    for _ in range(s.batch_size):
        source = data.lm_seeds if (rng.random() < s.seed_code_share or not data.lm_stdlib) else data.lm_stdlib
        start = rng.randrange(max(1, len(source) - s.seq_len))
        chunk = source[start : start + s.seq_len]
        rows.append((chunk, chunk))
    return _collate(rows, pad, shift_all=True)


def _sft_batch(pool: list[tuple[list[int], list[int]]], s, rng: random.Random, pad: int):
    return _collate([pool[rng.randrange(len(pool))] for _ in range(s.batch_size)], pad)


def _collate(rows, pad: int, shift_all: bool = False):
    """Right-padded input ids, attention mask and labels (-100 on prompts and padding)."""
    import torch

    seqs, labels = [], []
    for prompt, answer in rows:
        if shift_all:  # plain language modelling: every token is a target
            seqs.append(list(prompt))
            labels.append(list(prompt))
        else:
            seqs.append(prompt + answer)
            labels.append([-100] * len(prompt) + answer)
    width = max(len(x) for x in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    lab = torch.full((len(seqs), width), -100, dtype=torch.long)
    for i, (x, y) in enumerate(zip(seqs, labels)):
        ids[i, : len(x)] = torch.tensor(x)
        mask[i, : len(x)] = 1
        lab[i, : len(y)] = torch.tensor(y)
    return ids, mask, lab


def _stage_batches(data: _Data, s, stage: str, rng: random.Random, pad: int):
    if stage == "lm":
        return _lm_batch(data, s, rng, pad)
    if stage == "curriculum":
        pools = [p for p in (data.curriculum, data.curriculum, data.repairs) if p]
        return _sft_batch(pools[rng.randrange(len(pools))], s, rng, pad)
    roll = rng.random()
    if roll < s.replay_share:
        return _lm_batch(data, s, rng, pad)
    if roll < s.replay_share + s.gold_share and data.gold:
        return _sft_batch(data.gold, s, rng, pad)
    return _sft_batch(data.repairs or data.gold, s, rng, pad)


# ---------------------------------------------------------------------------------------------------------------------
# The recipe


def build_base(
    cfg: Config,
    out_dir: Path,
    *,
    inputs: BaseInputs | None = None,
    say: Callable[[str], None] = lambda msg: None,
    snapshots: Path | None = None,
    snapshot_every: int = 0,
) -> BaseBuild:
    """Pre-train the base into `out_dir` (see the module docstring) and write its manifest. With `snapshots`, the
    model is also saved there (`step-NNNNN/`) at the end of each stage and every `snapshot_every` steps, to measure
    the recipe along the way; snapshots change nothing in the result."""
    import torch
    from transformers import Qwen2ForCausalLM

    started = time.monotonic()
    policy, s = cfg.policy, cfg.policy.bootstrap
    torch.set_num_threads(s.threads)
    torch.manual_seed(s.seed)
    inputs = inputs or gather_inputs(cfg)
    content_hash = inputs.content_hash(policy)
    tokenizer = train_tokenizer(policy, [f.text for f in inputs.corpus] + _format_texts())
    data = _prepare(inputs, tokenizer, policy, say)
    model = Qwen2ForCausalLM(qwen2_config(policy, tokenizer))
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    params = sum(p.numel() for p in model.parameters())
    say(precision_note(model, s.precision, s.batch_size, s.seq_len, s.lm_steps + s.curriculum_steps + s.repair_steps))
    say(
        f"model: {params / 1e6:.2f}M parameters; stages lm {s.lm_steps}, curriculum {s.curriculum_steps}, "
        f"repair {s.repair_steps} steps of {s.batch_size}"
    )

    optimizer = torch.optim.AdamW(model.parameters(), lr=s.learning_rate, weight_decay=0.01, betas=(0.9, 0.98))
    total = s.lm_steps + s.curriculum_steps + s.repair_steps
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: (
            min(1.0, (step + 1) / max(1, s.warmup_steps))
            * 0.5
            * (1 + math.cos(math.pi * min(step, total) / max(1, total)))
        ),
    )
    rng = random.Random(f"batches:{s.seed}")
    losses: dict[str, list[float]] = {}
    model.train()
    step = 0
    for stage, steps in (("lm", s.lm_steps), ("curriculum", s.curriculum_steps), ("repair", s.repair_steps)):
        curve, running = losses.setdefault(stage, []), []
        for n in range(steps):
            ids, mask, labels = _stage_batches(data, s, stage, rng, tokenizer.pad_token_id)
            with training_precision(s.precision):
                logits = model(input_ids=ids, attention_mask=mask).logits
            loss = torch.nn.functional.cross_entropy(
                logits[:, :-1].float().reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=-100
            )
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            running.append(float(loss.detach()))
            step += 1
            if (n + 1) % 25 == 0 or n + 1 == steps:
                curve.append(round(sum(running) / len(running), 4))
                say(
                    f"{stage} step {n + 1}/{steps} (total {step}/{total}): loss {curve[-1]:.3f}, "
                    f"{time.monotonic() - started:.0f}s"
                )
                running = []
            if snapshots is not None and (n + 1 == steps or (snapshot_every and step % snapshot_every == 0)):
                model.save_pretrained(snapshots / f"step-{step:05d}")
                tokenizer.save_pretrained(snapshots / f"step-{step:05d}")

    out_dir.mkdir(parents=True, exist_ok=True)
    model.eval()
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    weights = out_dir / WEIGHTS
    build = BaseBuild(
        content_hash=content_hash,
        sha256=hashlib.sha256(weights.read_bytes()).hexdigest(),
        params=params,
        bytes=weights.stat().st_size,
        seconds=round(time.monotonic() - started, 1),
        data=data.counts,
        losses=losses,
        settings=policy.model_dump(mode="json", exclude={"base_model", "engine"}),
    )
    (out_dir / MANIFEST).write_text(json.dumps(asdict(build), indent=2, sort_keys=True) + "\n")
    return build


def training_precision(precision: str):
    """The context of a CPU training step: bf16 autocast, or none (fp32)."""
    import contextlib

    import torch

    return torch.autocast("cpu", dtype=torch.bfloat16) if precision == "bf16" else contextlib.nullcontext()


def precision_note(model, precision: str, batch: int, seq: int, steps: int) -> str:
    """One forward and backward pass of a batch of this shape in each number format, timed (no optimizer step, the
    gradients dropped, the random state untouched: the build is the same with or without it); what they make of
    `steps`, and a word when bf16 is chosen and is much slower here (a CPU without native bfloat16)."""
    import torch

    ids = torch.randint(0, model.config.vocab_size, (batch, seq), generator=torch.Generator().manual_seed(0))
    seconds = {}
    for fmt in ("bf16", "fp32", "bf16", "fp32"):  # the first of each warms up
        started = time.perf_counter()
        with training_precision(fmt):
            model(input_ids=ids, labels=ids).loss.backward()
        seconds[fmt] = time.perf_counter() - started
    model.zero_grad(set_to_none=True)
    hours = {fmt: steps * t / 3600 for fmt, t in seconds.items()}
    note = (
        f"precision {precision}: a step of {batch} x {seq} takes ~{seconds[precision]:.2f} s here "
        f"(bf16 {seconds['bf16']:.2f} s, fp32 {seconds['fp32']:.2f} s): ~{hours[precision]:.1f} h for {steps} steps"
    )
    if precision == "bf16" and seconds["bf16"] > 2 * seconds["fp32"]:
        note += (
            f". This CPU has no fast bfloat16 (torch: {torch.backends.cpu.get_cpu_capability()}): "
            f"policy.bootstrap.precision: fp32 would take ~{hours['fp32']:.1f} h (a base of its own content hash)"
        )
    return note


def _format_texts() -> list[str]:
    from evals import prompts

    return [
        prompts.PROMPT_TEMPLATE,
        prompts.ANSWER_FORMAT,
        prompts.ORACLE_TEMPLATE,
        prompts.ORACLE_ANSWER_FORMAT,
        "<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n" * 50,
    ]


# ---------------------------------------------------------------------------------------------------------------------
# The shipped base, the cache, verification


def read_manifest(path: Path) -> dict:
    return json.loads((Path(path) / MANIFEST).read_text())


def verify_base(path: Path) -> dict:
    """The manifest of the base at `path`, after checking its weights against the sha256 it records."""
    manifest = read_manifest(path)
    actual = hashlib.sha256((Path(path) / WEIGHTS).read_bytes()).hexdigest()
    if actual != manifest["sha256"]:
        raise BaseCorrupt(f"{Path(path) / WEIGHTS}: sha256 {actual} does not match its manifest ({manifest['sha256']})")
    return manifest


@dataclass(frozen=True)
class BaseResult:
    path: str
    source: str  # shipped | cache | built
    content_hash: str
    sha256: str
    matches_shipped: bool | None  # for a build: are its weights the shipped ones, bit for bit?


def ensure_base(
    cfg: Config, *, from_scratch: bool = False, say: Callable[[str], None] = lambda msg: None
) -> BaseResult:
    """The base for this config: the shipped one when its content hash matches, else one cached under home, else
    built there. `from_scratch` always builds (into home) and reports whether it reproduced the shipped weights."""
    inputs = gather_inputs(cfg)
    content_hash = inputs.content_hash(cfg.policy)
    shipped = read_manifest(SHIPPED_BASE) if (SHIPPED_BASE / MANIFEST).exists() else None
    if not from_scratch and shipped and shipped["content_hash"] == content_hash:
        verify_base(SHIPPED_BASE)
        return BaseResult(str(SHIPPED_BASE), "shipped", content_hash, shipped["sha256"], True)
    cached = cfg.home / "cache" / "base" / content_hash
    if not from_scratch and (cached / MANIFEST).exists():
        manifest = verify_base(cached)
        return BaseResult(str(cached), "cache", content_hash, manifest["sha256"], None)
    if shipped and shipped["content_hash"] != content_hash:
        say(
            f"the shipped base was built from other inputs ({shipped['content_hash'][:12]} != {content_hash[:12]}): "
            "building this config's base"
        )
    partial = cached.with_name(cached.name + ".partial")
    build = build_base(cfg, partial, inputs=inputs, say=say)
    import shutil

    shutil.rmtree(cached, ignore_errors=True)
    partial.rename(cached)
    same = None if shipped is None else shipped["sha256"] == build.sha256
    return BaseResult(str(cached), "built", content_hash, build.sha256, same)


def main(argv: list[str] | None = None) -> int:
    """`python scripts/build_base.py [--out DIR] [--config FILE]`: build the base into DIR (default models/base)."""
    import argparse

    from postgame.config import load_config

    parser = argparse.ArgumentParser(description="Pre-train the base policy (models/bootstrap.py).")
    parser.add_argument("--out", default=str(SHIPPED_BASE))
    parser.add_argument("--config", default=None)
    parser.add_argument("--snapshots", default="", help="Also save the model into DIR/step-NNNNN along the way.")
    parser.add_argument("--snapshot-every", type=int, default=0, help="Steps between snapshots (0 = stage ends).")
    args = parser.parse_args(argv)
    cfg = load_config(args.config)
    build = build_base(
        cfg,
        Path(args.out),
        say=lambda msg: print(msg, file=sys.stderr, flush=True),
        snapshots=Path(args.snapshots) if args.snapshots else None,
        snapshot_every=args.snapshot_every,
    )
    print(
        json.dumps(
            {
                "out": args.out,
                "sha256": build.sha256,
                "content_hash": build.content_hash,
                "params": build.params,
                "bytes": build.bytes,
                "seconds": build.seconds,
            },
            indent=2,
        )
    )
    return 0
