"""Learning benchmark of acting: the agent base, then GRPO in the environment, SFT on trajectories and DPO on
trajectory pairs at equal CPU seconds, trained on the same agent traffic, each scored as an agent on the held-out
splits beside the baselines.

    POSTGAME_HOME=.postgame-acting POSTGAME_AGENT__ENABLED=true OMP_NUM_THREADS=2 .venv/bin/python \
        benchmarks/bench_acting.py [--seeds 0,1,2] [--sessions 96] [--grpo-steps 8] [--splits indomain,eval,holdout]
        [--all-splits-seeds 0] [--limit N] [--snapshot ID] [--base FIRST_LINE.json] [--json] [--png FILE]

Everything runs through the product's own commands in one home (`agent.enabled`: the base is the agent base,
traffic is its episodes, training reads their trajectories). Once: the agent base's score on each split (one greedy
episode per instance, graded by the harness: models.evaluate.agent_episodes), and the traffic (`postgame simulate
--sessions N --seed 0`, then `postgame ingest`: one snapshot every seed trains on, so the seeds vary training only).
Per seed S:
1. `postgame train --mode grpo --max-steps K --seed S`: GRPO with whole episodes in the sandbox (models/rollout.py),
   the harness's grade at submit the reward;
2. `postgame train --mode sft --seed S` on the same snapshot's verified trajectories, and `--mode dpo` on its
   trajectory pairs, each with as many steps as fit in the GRPO run's CPU seconds (per-step and fixed cost from
   probes of 3 and 9 steps);
3. all three scored as agents on every split: resolved, PASS_TO_PASS breakage, turns per episode.
Baselines per split: the empty patch (0) and one random single edit per instance (bench_agent_base.py's).
The bar (issue 21): mean GRPO in-domain resolved - mean SFT > the spread (max - min) of either across seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_agent_base import _random_edit
from bench_rl import candidate_dir, postgame, probe_cost, sft_at_equal_cpu, spread

from postgame.config import load_config


def score(cfg, model_dir: str, tag: str, splits: list[str], out: Path, limit: int | None) -> dict:
    """One greedy episode per instance of each split: resolved, PASS_TO_PASS broken, turns, outcome mix."""
    from evals.factory.instances import load_split
    from models.evaluate import agent_episodes

    row = {}
    for split in splits:
        instances = sorted(load_split(cfg, split), key=lambda i: i.instance_id)[:limit]
        start = time.perf_counter()
        report = agent_episodes(cfg, model_dir, tag, instances, out / tag / split)
        row[split] = {
            "n": report.episodes,
            "resolved": report.resolved,
            "p2p_broken": report.p2p_breaking,
            "turns": round(report.mean_turns, 2),
            "outcomes": {k: v for k, v in report.outcomes.items() if v},
            "seconds": round(time.perf_counter() - start, 1),
        }
    return row


def run_seed(cfg, seed: int, args, snapshots: list[str], splits: list[str], out: Path, costs: dict) -> dict:
    t0 = time.monotonic()
    on = [a for s in snapshots for a in ("--snapshot", s)]
    grpo = postgame("train", "--mode", "grpo", *on, "--max-steps", str(args.grpo_steps), "--seed", str(seed))
    cpu_s = grpo["cost"]["cpu_s"]
    row: dict = {"seed": seed, "grpo_metrics": grpo.get("metrics", {})}
    trained = {"grpo": grpo}
    for mode in ("sft", "dpo"):
        try:  # DPO needs a verified and a failed trajectory of one task in the traffic
            if mode not in costs:  # CPU per step and fixed, probed on the first seed: the same data, the same cost
                costs[mode] = probe_cost(on, seed, mode)
            trained[mode] = sft_at_equal_cpu(on, cpu_s, seed, mode, costs[mode])
        except SystemExit as failed:
            row[f"{mode}_failed"] = str(failed)[-500:]
    for name, result in trained.items():
        row[f"{name}_steps"] = result["steps"]
        row[f"{name}_cpu_s"] = round(result["cost"]["cpu_s"], 1)
    limit = args.limit or None
    for name, result in trained.items():
        row[name] = score(cfg, candidate_dir(cfg, result["run_id"]), f"{name}-seed{seed}", splits, out, limit)
    row["seconds"] = round(time.monotonic() - t0, 1)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--sessions", type=int, default=96)
    parser.add_argument("--grpo-steps", type=int, default=8, help="GRPO optimizer steps per seed.")
    parser.add_argument("--splits", default="indomain,eval,holdout")
    parser.add_argument(
        "--all-splits-seeds",
        default="",
        help="Score only these seeds on every split, the rest on the first (default all).",
    )
    parser.add_argument("--limit", type=int, default=0, help="Score the first N tasks of each split (0 = all).")
    parser.add_argument("--snapshot", default="", help="Train on these ingested snapshots (no new traffic).")
    parser.add_argument(
        "--base", default="", help="Reuse the base and baseline scores of an earlier run (its first line, a JSON file)."
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--png", default="", help="Draw in-domain resolved per seed (base, GRPO, SFT).")
    args = parser.parse_args(argv)

    cfg = load_config(None)
    if not cfg.agent.enabled:
        sys.exit("bench_acting measures the agent: set agent.enabled (POSTGAME_AGENT__ENABLED=true)")
    import torch

    from evals.factory.instances import load_split
    from models.policy import base_policy_dir

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    out = cfg.home / "bench" / "acting" / time.strftime("%Y%m%dT%H%M%S")
    splits = [s for s in args.splits.split(",") if s]
    limit = args.limit or None
    earlier = json.loads(Path(args.base).read_text()) if args.base else {}
    baselines = earlier.get("baselines") or {
        s: {
            "random_edit": _random_edit(
                cfg, sorted(load_split(cfg, s), key=lambda i: i.instance_id)[:limit], out / "random" / s
            ),
            "empty": 0,
        }
        for s in splits
    }
    base = earlier.get("base") or score(cfg, str(base_policy_dir(cfg)), "agent-base", splits, out, limit)
    print(json.dumps({"base": base, "baselines": baselines}), flush=True)
    snapshots = [s for s in args.snapshot.split(",") if s]
    traffic = None
    if not snapshots:
        sim = postgame("simulate", "--sessions", str(args.sessions), "--seed", "0")
        snapshots = [postgame("ingest")["snapshot_id"]]
        traffic = {"sessions": args.sessions, "resolved": sim["outcomes"].get("resolved", 0)}
    rows: list[dict] = []
    costs: dict[str, tuple[float, float]] = {}
    everywhere = {int(s) for s in args.all_splits_seeds.split(",") if s}
    for seed in [int(s) for s in args.seeds.split(",") if s]:
        on = splits if not everywhere or seed in everywhere else splits[:1]
        rows.append(run_seed(cfg, seed, args, snapshots, on, out, costs))
        print(json.dumps(rows[-1]), flush=True)
    first = splits[0]
    grpo = [r["grpo"][first]["resolved"] for r in rows]
    sft = [r["sft"][first]["resolved"] for r in rows]
    dpo = [r["dpo"][first]["resolved"] for r in rows if "dpo" in r]
    summary = {
        "split": first,
        "base": base,
        "baselines": baselines,
        "traffic": traffic,
        "snapshots": snapshots,
        "grpo_mean": statistics.fmean(grpo),
        "grpo_spread": spread(grpo),
        "sft_mean": statistics.fmean(sft),
        "sft_spread": spread(sft),
        "dpo_mean": statistics.fmean(dpo) if dpo else None,  # None: no seed had pairs to train on
        "dpo_spread": spread(dpo),
        "bar_met": statistics.fmean(grpo) - statistics.fmean(sft) > max(spread(grpo), spread(sft)),
        "rows": rows,
        "reports": str(out),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if args.png:
        plot(summary, Path(args.png))
    print(json.dumps(summary, indent=2) if args.json else _line(summary))
    return 0


def _line(s: dict) -> str:
    n = s["base"][s["split"]]["n"]
    return (
        f"{s['split']} resolved of {n}: agent base {s['base'][s['split']]['resolved']}, GRPO {s['grpo_mean']:.1f} "
        f"(spread {s['grpo_spread']}), SFT at equal CPU {s['sft_mean']:.1f} (spread {s['sft_spread']}), "
        + (
            f"DPO at equal CPU {s['dpo_mean']:.1f} (spread {s['dpo_spread']}); "
            if s["dpo_mean"] is not None
            else "DPO did not run (no pairs); "
        )
        + f"bar {'met' if s['bar_met'] else 'missed'}"
    )


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    split = summary["split"]
    rows = summary["rows"]
    seeds = [r["seed"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.axhline(summary["base"][split]["resolved"], color="grey", ls="--", label="agent base")
    ax.axhline(summary["baselines"][split]["random_edit"], color="lightgrey", ls=":", label="random edit")
    ax.plot(seeds, [r["grpo"][split]["resolved"] for r in rows], "o-", label="GRPO in the environment")
    ax.plot(seeds, [r["sft"][split]["resolved"] for r in rows], "s-", label="SFT on trajectories, equal CPU")
    dpo = [(r["seed"], r["dpo"][split]["resolved"]) for r in rows if "dpo" in r]
    if dpo:  # no pairs in the traffic: nothing to draw
        ax.plot([s for s, _ in dpo], [v for _, v in dpo], "^-", label="DPO on trajectory pairs, equal CPU")
    ax.set_xlabel("seed")
    ax.set_ylabel(f"{split} resolved (of {summary['base'][split]['n']})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    raise SystemExit(main())
