"""The embedded base as an agent: the shipped base, taught to act in the environment on synthetic trajectories.

    nice -n 10 python scripts/build_agent_base.py --out models/base_agent     # ~45 min on 2 cores

The base (models/base/, models/bootstrap.py) answers a task with one edit block. Acting adds three habits, which
synthetic trajectories from the same repairs (`models.base_data.repair_data`) teach — the factory's mutations of local
code, never a held-out bug (nor, with `train_split: withheld`, a train-split bug), no test run and no download:
- edit, then `run_tests`, then `submit` when the visible tests pass;
- when they fail after its edit, undo it (the edit back) and submit (what it submits then breaks nothing);
- sometimes, after the undo, the right edit, the tests again, and submit.
A trajectory is the messages an episode records (OpenAI shape), rendered by the compact chat template
(models/agent.py); the loss is on the assistant turns only (the template's {% generation %} marks), and never on
the wrong edit that starts a recovery trajectory. Observations are written as the environment writes them
(`evals.agent.env.tests_observation`, the edit message). Last, the trained weights are moved back toward the base's
(`finetune_share`: WiSE-FT, Wortsman et al. 2022, "Robust fine-tuning of zero-shot models"), which keeps more of the
base's one-edit skill for the agent's first edit. The build is cached by content hash: the base's weights, the
trajectories, the settings and this code; `models/base_agent/manifest.json` records it.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evals.agent.env import first_observation, tests_observation
from evals.agent.episode import SYSTEM_PROMPT, call_message
from evals.agent.workspace import edit_message
from evals.factory.mutate import find_mutations
from evals.harness.searchreplace import parse_edits
from models.agent import COMPACT_TEMPLATE
from models.base_data import Example
from models.bootstrap import training_precision
from postgame.config import Config
from postgame.settings.agent import AgentSettings

TOOL_NAMES = "list_files, view, search, edit, run_tests, submit"  # the default agent.tools, as reset names them
_CODE = re.compile(r"```[a-z]*\n(.*?)```\nThe fix goes in (\S+)\.", re.S)


@dataclass(frozen=True)
class AgentBaseSettings:
    # 800 steps of 8 are 1.6 epochs of the ~4,000 trajectories; 400 were 0.8 (BENCHMARKS.md, "Session 23").
    steps: int = 800
    batch_size: int = 8
    learning_rate: float = 5e-4
    warmup_steps: int = 50
    max_tokens: int = 896
    # Trajectories that try to start with a wrong edit and undo it (when one is found): the first edit of those is
    # never a target, and the first edit decides most episodes. 0.2 resolves 63 of 140 in-domain, 0.6 resolved 54
    # (BENCHMARKS.md, "Session 22").
    recover_share: float = 0.2
    retry_share: float = 0.2  # trajectories that also retry with the right edit after the undo
    # The share of the fine-tuning kept: the shipped weights are base + finetune_share * (trained - base). Chosen on
    # the dev split among 1.0, 0.8 and 0.6 (31, 33 and 29 of 70), then measured once on the in-domain test split:
    # 69 of 140 against 65 with 1.0 (BENCHMARKS.md, "Session 24").
    finetune_share: float = 0.8
    seed: int = 0
    threads: int = 2
    precision: str = "fp32"  # policy.bootstrap.precision: models.bootstrap.training_precision


def _edit_args(block: str) -> dict[str, str] | None:
    try:
        (edit,) = parse_edits(block)
    except ValueError:
        return None
    return {"path": edit.path, "search": edit.search, "replace": edit.replace}


def _edited(args: dict[str, str]) -> str:
    return edit_message(args["path"], args["search"], args["replace"])


def wrong_edit(example: Example, gold: dict[str, str], rng: random.Random) -> dict[str, str] | None:
    """Another single-operator edit of the code shown (the factory's mutation operators), not the gold one."""
    m = _CODE.search(example.prompt)
    if not m:
        return None
    window, path = m.group(1), m.group(2)
    try:
        mutations = find_mutations(window, path)
    except SyntaxError:
        return None
    rng.shuffle(mutations)
    lines = window.splitlines(keepends=True)
    for mut in mutations:
        mutated = mut.apply(window).splitlines(keepends=True)
        if len(mutated) != len(lines):
            continue
        diff = [i for i, (a, b) in enumerate(zip(lines, mutated)) if a != b]
        if len(diff) != 1:
            continue
        i = diff[0]
        args = {"path": path, "search": lines[i], "replace": mutated[i]}
        if args["search"] != gold["search"] or args["replace"] != gold["replace"]:
            return args
    return None


def _test_names(path: str, rng: random.Random) -> list[str]:
    stem = Path(path).stem
    return [
        f"tests/test_{stem}.py::test_{w}"
        for w in rng.sample(["basic", "edge", "empty", "many", "order", "round_trip", "types", "default"], 4)
    ]


def _passing(path: str, rng: random.Random) -> str:
    names = _test_names(path, rng)[: rng.randint(2, 4)]
    return tests_observation(dict.fromkeys(names, "PASSED"), "")


def _failing(path: str, rng: random.Random) -> str:
    names = _test_names(path, rng)
    statuses = {n: ("FAILED" if i == 0 else "PASSED") for i, n in enumerate(names)}
    x, y = rng.randint(0, 20), rng.randint(21, 40)
    log = f"---- test output ----\nE       AssertionError: assert {x} == {y}\nE        +  where {x} = f()\n"
    return tests_observation(statuses, log)


def trajectory(example: Example, rng: random.Random, s: AgentBaseSettings) -> tuple[list[dict[str, Any]], int] | None:
    """(messages, index of the first assistant message to learn from) for one repair example."""
    gold = _edit_args(example.completion)
    if gold is None:
        return None
    tests = f"tests/test_{Path(gold['path']).stem}.py"
    user = first_observation(example.prompt, tests, TOOL_NAMES, AgentSettings().max_observation_chars)
    msgs: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
    n = [0]

    def call(name: str, args: dict, result: str) -> None:
        n[0] += 1
        msgs.append(call_message(f"call_{n[0]}", name, args))
        msgs.append({"role": "tool", "tool_call_id": f"call_{n[0]}", "name": name, "content": result})

    learn_from = 2
    wrong = wrong_edit(example, gold, rng) if rng.random() < s.recover_share else None
    if wrong is not None:
        call("edit", wrong, _edited(wrong))
        learn_from = len(msgs)  # the wrong edit itself is never a target
        call("run_tests", {}, _failing(gold["path"], rng))
        undo = {"path": wrong["path"], "search": wrong["replace"], "replace": wrong["search"]}
        call("edit", undo, _edited(undo))
        if rng.random() < s.retry_share / max(s.recover_share, 1e-9):
            call("edit", gold, _edited(gold))
            call("run_tests", {}, _passing(gold["path"], rng))
    else:
        call("edit", gold, _edited(gold))
        call("run_tests", {}, _passing(gold["path"], rng))
    n[0] += 1
    msgs.append(call_message(f"call_{n[0]}", "submit", {}))
    return msgs, learn_from


def encode(
    tokenizer, messages: list[dict[str, Any]], learn_from: int, max_tokens: int, tools: list[dict] | None = None
) -> tuple[list[int], list[int]] | None:
    """Token ids and labels (-100 off the assistant turns, and before message `learn_from`), the tools rendered as
    an episode renders them."""
    from models.agent import template_messages

    full = tokenizer.apply_chat_template(
        template_messages(messages), tools=tools, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    ids, mask = list(full["input_ids"]), list(full["assistant_masks"])
    if learn_from > 2:  # mask the assistant turns before `learn_from`: the prefix's own assistant tokens
        prefix = tokenizer.apply_chat_template(
            template_messages(messages[:learn_from]), tools=tools, tokenize=True, return_dict=True
        )["input_ids"]
        mask = [0] * len(prefix) + mask[len(prefix) :]
    if len(ids) > max_tokens or not any(mask):
        return None
    return ids, [t if m else -100 for t, m in zip(ids, mask)]


@dataclass
class AgentBaseBuild:
    content_hash: str
    sha256: str
    base_sha256: str
    trajectories: int
    recover: int
    seconds: float
    losses: list[float]
    settings: dict
    command: str = "POSTGAME_HOME=.postgame OMP_NUM_THREADS=2 nice -n 10 python scripts/build_agent_base.py --out models/base_agent"


def toward_base(model: Any, base: Any, share: float) -> None:
    """Move `model`'s weights back toward `base`'s, in place: base + share * (model - base) (1.0 leaves the
    fine-tuned weights, 0.0 gives the base's). Both are the same architecture."""
    import torch

    if share == 1.0:
        return
    reference = dict(base.named_parameters())
    with torch.no_grad():
        for name, p in model.named_parameters():
            b = reference[name]
            p.copy_(b + share * (p - b))


def _default_tools() -> list[dict]:
    """The schemas of the default tools (`agent.tools`), as an episode renders them."""
    from evals.agent import make_environment
    from evals.agent.episode import tool_schemas
    from postgame.settings.agent import AgentSettings
    from postgame.settings.harness import HarnessSettings

    return tool_schemas(make_environment(AgentSettings(), HarnessSettings()))


def gather_examples(cfg: Config) -> list[Example]:
    """The base's repair data (`models.base_data.repair_data`): synthetic repairs, then train-split gold."""
    from models.base_data import repair_data
    from models.bootstrap import gather_inputs

    inputs = gather_inputs(cfg)
    seeds = {s.name: s for s in inputs.train_seeds}
    synthetic, gold, _ = repair_data(inputs.corpus, inputs.records, seeds, cfg.policy.bootstrap)
    return synthetic + gold


def trajectory_rows(cfg: Config, tok: Any, s: AgentBaseSettings) -> tuple[list[tuple[list[int], list[int]]], int]:
    """The encoded trajectories the build trains on, and how many of them recover from a wrong edit."""
    rng = random.Random(f"agent:{s.seed}")
    rows, recover = [], 0
    tools = _default_tools()
    for ex in gather_examples(cfg):
        made = trajectory(ex, rng, s)
        if made is None:
            continue
        enc = encode(tok, made[0], made[1], s.max_tokens, tools)
        if enc is not None:
            rows.append(enc)
            recover += made[1] > 2
    return rows, recover


def content_hash(base_sha: str, s: AgentBaseSettings, rows: list[tuple[list[int], list[int]]]) -> Any:
    """What the build depends on: the base's weights, the settings, the template, the trajectories and this code."""
    h = hashlib.sha256(json.dumps([base_sha, asdict(s), COMPACT_TEMPLATE]).encode())
    for ids, labels in rows:
        h.update(bytes(str(ids), "ascii") + bytes(str(labels), "ascii"))
    h.update(Path(__file__).read_bytes())
    return h


def build_agent_base(
    cfg: Config,
    out_dir: Path,
    *,
    base_dir: Path,
    settings: AgentBaseSettings | None = None,
    say: Callable[[str], None] = lambda msg: None,
) -> AgentBaseBuild:
    """Fine-tune the base at `base_dir` on synthetic trajectories into `out_dir` (see the module docstring)."""
    import torch
    from transformers import AutoModelForCausalLM

    from models.tokenizer import load_tokenizer

    s = settings or AgentBaseSettings()
    started = time.monotonic()
    torch.set_num_threads(s.threads)
    torch.manual_seed(s.seed)
    tok = load_tokenizer(base_dir)
    tok.chat_template = COMPACT_TEMPLATE
    rows, recover = trajectory_rows(cfg, tok, s)
    base_sha = hashlib.sha256((base_dir / "model.safetensors").read_bytes()).hexdigest()
    h = content_hash(base_sha, s, rows)
    say(
        f"agent base: {len(rows)} trajectories ({recover} recover from a wrong edit), {s.steps} steps of {s.batch_size}"
    )
    model = AutoModelForCausalLM.from_pretrained(base_dir)
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
    order = random.Random(f"batches:{s.seed}")
    losses, running = [], []
    pad = tok.pad_token_id
    for step in range(s.steps):
        batch = [rows[order.randrange(len(rows))] for _ in range(s.batch_size)]
        width = max(len(ids) for ids, _ in batch)
        ids_t = torch.full((len(batch), width), pad, dtype=torch.long)
        lab_t = torch.full((len(batch), width), -100, dtype=torch.long)
        att = torch.zeros((len(batch), width), dtype=torch.long)
        for i, (ids, labels) in enumerate(batch):
            ids_t[i, : len(ids)], lab_t[i, : len(ids)], att[i, : len(ids)] = (
                torch.tensor(ids),
                torch.tensor(labels),
                1,
            )
        with training_precision(s.precision):
            logits = model(input_ids=ids_t, attention_mask=att).logits
        loss = torch.nn.functional.cross_entropy(
            logits[:, :-1].float().reshape(-1, logits.shape[-1]), lab_t[:, 1:].reshape(-1), ignore_index=-100
        )
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        running.append(float(loss.detach()))
        if (step + 1) % 50 == 0 or step + 1 == s.steps:
            losses.append(round(sum(running) / len(running), 4))
            running = []
            say(f"agent base step {step + 1}/{s.steps}: loss {losses[-1]:.3f}, {time.monotonic() - started:.0f}s")
    out_dir.mkdir(parents=True, exist_ok=True)
    model.eval()
    toward_base(model, AutoModelForCausalLM.from_pretrained(base_dir), s.finetune_share)
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)
    build = AgentBaseBuild(
        h.hexdigest(),
        hashlib.sha256((out_dir / "model.safetensors").read_bytes()).hexdigest(),
        base_sha,
        len(rows),
        recover,
        round(time.monotonic() - started, 1),
        losses,
        asdict(s),
    )
    (out_dir / "manifest.json").write_text(json.dumps(asdict(build), indent=2, sort_keys=True) + "\n")
    return build
