"""Learning benchmark, RL part: does training on the cycle's own verified traffic raise in-domain pass@1 over the base,
by more than the spread across seeds, and what does continued SFT at equal compute do beside it?

    POSTGAME_HOME=.postgame-rl OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_rl.py \
        [--seeds 0,1,2] [--sessions 300] [--rl dpo|grpo] [--steps 30] [--snapshot ID,ID] [--limit N] [--json]
        [--png FILE]

Everything runs through the product's own commands in one home (folder store, sqlite MLflow, no servers; the base
is the serving policy because nothing is promoted). Per seed S:
1. traffic: `postgame simulate --sessions N --seed S` (the base attempts train-split tasks, sampled at
   `policy.temperature` and checked by the scaffold, every attempt graded by the harness and logged as a production
   record); with `--shared-traffic` one snapshot (seed 0) serves every seed, so the seeds vary training only;
2. `postgame ingest` → that traffic's snapshot;
3. RL: `postgame train --mode dpo|grpo --snapshot ID --max-steps K --seed S` (curate → TRL, the cycle's path);
4. continued SFT at equal compute: `postgame train --mode sft` on the same snapshot (its verified completions), with
   as many steps as fit in the RL run's CPU seconds (per-step and fixed cost from SFT probes of 3 and 9 steps);
5. in-domain held-out pass@1 (greedy, graded by the harness) of the RL and SFT models; the base once (greedy is
   deterministic).
The bar (issue 10): mean RL pass@1 - base > the spread (max - min) of RL pass@1 across seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.measure import measure_split
from models.policy import Policy, base_policy_dir
from postgame.config import answering_once, load_config


def postgame(*args: str) -> dict:
    """One product command with --json; its JSON object (stdout), or exit with its stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "postgame", *args, "--json"], capture_output=True, text=True, env={**os.environ}
    )
    if proc.returncode != 0:
        sys.exit(f"postgame {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def pass_at_1(cfg, model_dir: str, tag: str, out: Path, limit: int | None) -> tuple[float, int]:
    policy = Policy(Path(model_dir), name="bench-rl", version=tag, settings=cfg.policy)
    scores = measure_split(cfg, policy, "indomain", k=1, out_dir=out / tag, limit=limit)
    return scores.pass_at_1, scores.instances


def traffic(args, seed: int) -> tuple[list[str], int, int]:
    """The serving policy's traffic, ingested: ([snapshot id], sessions, sessions resolved)."""
    sim = postgame("simulate", "--sessions", str(args.sessions), "--seed", str(seed))
    return [postgame("ingest")["snapshot_id"]], args.sessions, sim["outcomes"].get("resolved", 0)


def snapshot_outcomes(cfg, snapshots: list[str]) -> tuple[int, int]:
    """(sessions, sessions resolved) of these snapshots: the traffic and its successes."""
    from postgame.ingest.catalog import load_snapshot

    statuses = [
        load_snapshot(s, cfg=cfg, columns=["outcome"]).column("outcome").combine_chunks().field("status")
        for s in snapshots
    ]
    return (
        sum(len(c) for c in statuses),
        sum(status == "resolved" for column in statuses for status in column.to_pylist()),
    )


def run_seed(cfg, seed: int, args, out: Path, shared: tuple[list[str], int, int] | None) -> dict:
    t0 = time.monotonic()
    snapshots, sessions, resolved = shared or traffic(args, seed)
    on = [a for s in snapshots for a in ("--snapshot", s)]
    rl = postgame("train", "--mode", args.rl, *on, "--max-steps", str(args.steps), "--seed", str(seed))
    sft = sft_at_equal_cpu(on, rl["cost"]["cpu_s"], seed)
    row = {
        "seed": seed,
        "sessions": sessions,
        "resolved_traffic": resolved,
        "snapshots": snapshots,
        "rl_steps": rl["steps"],
        "rl_cpu_s": round(rl["cost"]["cpu_s"], 1),
        "sft_steps": sft["steps"],
        "sft_cpu_s": round(sft["cost"]["cpu_s"], 1),
    }
    for name, result in (("rl", rl), ("sft", sft)):
        model_dir = candidate_dir(cfg, result["run_id"])
        row[f"{name}_pass1"], row["n"] = pass_at_1(cfg, model_dir, f"{name}-seed{seed}", out, args.limit or None)
    row["seconds"] = round(time.monotonic() - t0, 1)
    return row


def sft_at_equal_cpu(on: list[str], cpu_s: float, seed: int, mode: str = "sft", cost: tuple | None = None) -> dict:
    """`postgame train --mode sft` (or `mode`) on the snapshots `on` with as many steps as fit in `cpu_s` CPU seconds,
    at `cost` = (CPU per step, fixed CPU of a run), measured by `probe_cost` unless given."""
    per_step, fixed = cost or probe_cost(on, seed, mode)
    steps = max(1, round((cpu_s - fixed) / per_step))
    return postgame("train", "--mode", mode, *on, "--max-steps", str(steps), "--seed", str(seed))


def probe_cost(on: list[str], seed: int, mode: str = "sft") -> tuple[float, float]:
    """(CPU seconds per step, fixed CPU seconds of a run) of `mode`, from two probes (3 and 9 steps): their
    difference leaves out the fixed cost."""
    short, long = (postgame("train", "--mode", mode, *on, "--max-steps", str(n), "--seed", str(seed)) for n in (3, 9))
    per_step = max(1e-3, (long["cost"]["cpu_s"] - short["cost"]["cpu_s"]) / (long["steps"] - short["steps"]))
    return per_step, max(0.0, short["cost"]["cpu_s"] - short["steps"] * per_step)


def candidate_dir(cfg, run_id: str) -> str:
    return json.loads((cfg.home / "runs" / run_id / "candidate.json").read_text())["model_dir"]


def spread(values: list[float]) -> float:
    return max(values) - min(values) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--rl", choices=("dpo", "grpo"), default="dpo")
    parser.add_argument("--steps", type=int, default=30, help="RL optimizer steps per seed.")
    parser.add_argument("--limit", type=int, default=0, help="Score the first N indomain tasks (0 = all).")
    parser.add_argument(
        "--snapshot", default="", help="Train every seed on these ingested snapshots, comma-separated (no new traffic)."
    )
    parser.add_argument(
        "--shared-traffic",
        action="store_true",
        help="One traffic snapshot (seed 0) for every seed: the seeds then vary training only.",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--png", default="", help="Draw pass@1 per seed (base, RL, SFT) into this file.")
    args = parser.parse_args(argv)

    cfg = answering_once(load_config(None))  # it measures the single answer
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    out = cfg.home / "bench" / "rl" / time.strftime("%Y%m%dT%H%M%S")
    limit = args.limit or None
    base, n = pass_at_1(cfg, str(base_policy_dir(cfg)), "base", out, limit)
    if not args.json:
        print(f"base: indomain pass@1 {base:.1%} (n={n})", flush=True)
    rows = []
    given = [s for s in args.snapshot.split(",") if s]
    shared = (given, *snapshot_outcomes(cfg, given)) if given else traffic(args, 0) if args.shared_traffic else None
    for seed in [int(s) for s in args.seeds.split(",") if s]:
        rows.append(run_seed(cfg, seed, args, out, shared))
        if not args.json:
            r = rows[-1]
            print(
                f"seed {seed}: {args.rl} {r['rl_pass1']:.1%} ({r['rl_steps']} steps, {r['rl_cpu_s']:.0f} CPU s)  "
                f"sft {r['sft_pass1']:.1%} ({r['sft_steps']} steps, {r['sft_cpu_s']:.0f} CPU s)  "
                f"traffic resolved {r['resolved_traffic']}/{r['sessions']}  {r['seconds']:.0f}s",
                flush=True,
            )
    rl = [r["rl_pass1"] for r in rows]
    sft = [r["sft_pass1"] for r in rows]
    summary = {
        "base_pass1": base,
        "n": n,
        "rl": args.rl,
        "rl_mean": statistics.fmean(rl),
        "rl_spread": spread(rl),
        "sft_mean": statistics.fmean(sft),
        "sft_spread": spread(sft),
        "rows": rows,
        "bar_met": statistics.fmean(rl) - base > spread(rl),
        "reports": str(out),
    }
    if args.png:
        plot(summary, Path(args.png))
    log_to_mlflow(cfg, summary, args.png)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"{args.rl}: {summary['rl_mean']:.1%} mean (spread {summary['rl_spread']:.1%}) vs base {base:.1%}; "
            f"continued SFT {summary['sft_mean']:.1%} (spread {summary['sft_spread']:.1%}); "
            f"bar {'met' if summary['bar_met'] else 'missed'}"
        )
    return 0


def log_to_mlflow(cfg, summary: dict, png: str) -> None:
    """The summary as a run `bench-rl` of the configured tracking server (the training runs are there already)."""
    import mlflow

    from postgame.runtime import resolve

    resolve(cfg)
    mlflow.set_experiment(cfg.tracking.experiment)
    with mlflow.start_run(run_name="bench-rl"):
        mlflow.log_params({"rl": summary["rl"], "n": summary["n"], "seeds": len(summary["rows"])})
        mlflow.log_metrics({k: float(v) for k, v in summary.items() if isinstance(v, (int, float))})
        for r in summary["rows"]:
            mlflow.log_metrics({"seed.rl_pass1": r["rl_pass1"], "seed.sft_pass1": r["sft_pass1"]}, step=r["seed"])
        mlflow.log_dict(summary, "bench_rl.json")
        if png:
            mlflow.log_artifact(png)


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds = [r["seed"] for r in summary["rows"]]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.axhline(summary["base_pass1"] * 100, color="grey", linestyle="--", label="base")
    ax.plot(seeds, [r["rl_pass1"] * 100 for r in summary["rows"]], "o-", label=summary["rl"])
    ax.plot(seeds, [r["sft_pass1"] * 100 for r in summary["rows"]], "s-", label="continued SFT (equal CPU)")
    ax.set_xlabel("seed")
    ax.set_ylabel(f"in-domain pass@1, % (n={summary['n']})")
    ax.set_xticks(seeds)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
