"""Tuning on the dev split: which training settings give a candidate that beats the base there, by paired outcomes.

    POSTGAME_HOME=<home> OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_tune.py --snapshot ID \
        --runs learning_rate=5e-4 learning_rate=1e-4 'learning_rate=1e-4,max_steps=64' [--mode sft] [--split dev] \
        [--json]

The gate decides on the in-domain test split (`promote.decide_split`, never tuned on); the settings it is shown
candidates of are chosen here, on the in-domain `dev` split (issue 21 item 2). One home, one traffic snapshot
(`postgame simulate` + `postgame ingest` first). For each run, a comma-separated list of `train:` keys
(`key=value`, parsed as YAML, as the POSTGAME_TRAIN__<KEY> overrides are): `postgame train --mode M --snapshot ID`
with those overrides (the cycle's own path: curate → TRL), then the candidate and the base answer every instance of
the split through the gate's own scoring (`models.evaluate.score_policy`: the scaffold, one greedy answer, graded by
the harness), and the gate's own decision on the split is printed (`models.promote.decide`, the base as champion):
resolved, wins and losses against the base, p, the detectable gain at the churn measured, which checks would refuse
it, PASS_TO_PASS breakage, and the training's CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.evaluate import score_policy
from models.policy import Policy, base_policy_dir
from models.promote import decide
from models.scores import SplitScores
from postgame.config import answering_once, load_config


def overrides(run: str) -> dict[str, str]:
    """`key=value,key=value` → {POSTGAME_TRAIN__KEY: value}."""
    env = {}
    for part in [p for p in run.split(",") if p.strip()]:
        key, sep, value = part.partition("=")
        if not sep:
            sys.exit(f"--runs: {part!r} is not key=value")
        env[f"POSTGAME_TRAIN__{key.strip().upper()}"] = value.strip()
    return env


def train(run: str, mode: str, snapshots: list[str]) -> dict:
    """`postgame train` with the run's overrides; its JSON object."""
    on = [a for s in snapshots for a in ("--snapshot", s)]
    proc = subprocess.run(
        [sys.executable, "-m", "postgame", "train", "--mode", mode, *on, "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, **overrides(run)},
    )
    if proc.returncode != 0:
        sys.exit(f"postgame train ({run}) failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def score(cfg, model_dir: Path, tag: str, records: list[dict], split: str, out: Path) -> SplitScores:
    """One model on the split, scored the gate's way."""
    policy = Policy(model_dir, name="bench-tune", version=tag, settings=cfg.policy)
    return score_policy(cfg, policy, records, out / tag, split=split, key=tag)


def compare(cfg, base: SplitScores, cand: SplitScores) -> dict:
    """The gate's own decision (`models.promote.decide`) on the split, the base as champion: what it would say of
    this candidate if the split decided (ties, errors, sampled attempts and every threshold as the gate has them)."""
    decision = decide({base.split: cand}, {base.split: base}, cfg.promote, split=base.split)
    return {
        "resolved": sum(o.resolved for o in cand.outcomes),
        "wins": decision.wins,
        "losses": decision.losses,
        "p": None if decision.p_value is None else round(decision.p_value, 4),
        "detectable": None if decision.detectable is None else round(decision.detectable, 3),
        "gate": "promote" if decision.promote else "refuse: " + ",".join(decision.failed),
        "p2p_broken": sum(o.p2p_broken for o in cand.outcomes),
        "errors": sum(bool(o.error) for o in cand.outcomes),
        "n": cand.n,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--snapshot", action="append", required=True, help="Traffic snapshot id (repeatable).")
    parser.add_argument("--runs", nargs="+", required=True, help="Each: comma-separated train: key=value overrides.")
    parser.add_argument("--mode", default="sft", choices=("sft", "dpo", "grpo"))
    parser.add_argument("--split", default="dev", help="The tuning split (default dev; never the deciding one).")
    parser.add_argument("--config", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    cfg = answering_once(load_config(args.config))  # it measures the single answer
    if args.split == cfg.promote.decide_split:
        sys.exit(f"--split {args.split!r} is the gate's deciding split: tune on another (dev)")
    from evals.factory.instances import load_records

    records = sorted(load_records(cfg, args.split), key=lambda r: r["instance_id"])
    if not records:
        sys.exit(f"split {args.split!r} has no instances in the current task catalog")
    out = cfg.home / "bench" / "tune" / time.strftime("%Y%m%dT%H%M%S")
    t0 = time.monotonic()
    base = score(cfg, base_policy_dir(cfg), "base", records, args.split, out)
    base_row = {"run": "base", "resolved": sum(o.resolved for o in base.outcomes), "n": base.n}
    base_row["p2p_broken"] = sum(o.p2p_broken for o in base.outcomes)
    base_row["seconds"] = round(time.monotonic() - t0, 1)
    rows = [base_row]
    if not args.json:
        print(json.dumps(base_row), flush=True)
    for run in args.runs:
        t0 = time.monotonic()
        result = train(run, args.mode, args.snapshot)
        model_dir = Path(json.loads((cfg.home / "runs" / result["run_id"] / "candidate.json").read_text())["model_dir"])
        row = {"run": run, "steps": result["steps"], "train_cpu_s": round(result["cost"]["cpu_s"], 1)}
        row |= compare(cfg, base, score(cfg, model_dir, f"run{len(rows)}", records, args.split, out))
        row["seconds"] = round(time.monotonic() - t0, 1)
        rows.append(row)
        if not args.json:
            print(json.dumps(row), flush=True)
    if args.json:
        print(json.dumps({"split": args.split, "mode": args.mode, "snapshots": args.snapshot, "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
