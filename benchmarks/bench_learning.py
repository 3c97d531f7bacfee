"""Learning benchmark, base part: how well the base policy repairs bugs, beside what guessing and doing nothing get.

    POSTGAME_HOME=.postgame OMP_NUM_THREADS=2 nice -n 10 .venv/bin/python benchmarks/bench_learning.py \
        [--model models/base] [--splits indomain,eval,holdout] [--k 4] [--limit N] [--seed 0] [--mlflow] [--json] \
        [--loss-png benchmarks/learning_base_loss.png]

For each split of the current task catalog (`postgame tasks build` first): pass@1 (greedy), pass@k (k sampled
completions), the empty patch and one random single-operator edit of the oracle code window, every patch graded by
the real harness (models/measure.py → evals.harness.run_evaluation). Printed as a table (and with `--json` as one
object); `--mlflow` also logs the scores to a run named `bench-learning`. The issue's bar: the base resolves at least
10% of the indomain held-out bugs at pass@1, and its eval-split score is read against the random-edit baseline.
The RL part of the benchmark (GRPO/DPO vs continued SFT from the cycle's own traffic) builds on this one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.measure import measure_split
from models.policy import SHIPPED_BASE, Policy
from postgame.config import answering_once, load_config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=str(SHIPPED_BASE), help="A checkpoint folder (default: the shipped base).")
    parser.add_argument("--splits", default="indomain,eval,holdout")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--limit", type=int, default=0, help="First N tasks of each split (0 = all).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", default=None)
    parser.add_argument("--mlflow", action="store_true", help="Log the scores to MLflow (run `bench-learning`).")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--loss-png", default="", help="Also draw the base's training loss (from its manifest).")
    args = parser.parse_args(argv)
    if args.loss_png:
        plot_losses(Path(args.model) / "manifest.json", Path(args.loss_png))

    cfg = answering_once(load_config(args.config))  # it measures the single answer
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    policy = Policy(Path(args.model), name="bench", version=Path(args.model).name, settings=cfg.policy)
    out = cfg.home / "bench" / "learning" / time.strftime("%Y%m%dT%H%M%S")
    rows, started = [], time.monotonic()
    for split in [s for s in args.splits.split(",") if s]:
        t0 = time.monotonic()
        scores = measure_split(cfg, policy, split, k=args.k, out_dir=out, limit=args.limit or None, seed=args.seed)
        rows.append({**scores.to_dict(), "seconds": round(time.monotonic() - t0, 1)})
        if not args.json:
            print(scores.line(), f"({rows[-1]['seconds']:.0f}s)", flush=True)
    result = {
        "model": args.model,
        "k": args.k,
        "seed": args.seed,
        "rows": rows,
        "reports": str(out),
        "seconds": round(time.monotonic() - started, 1),
        "load_avg": os.getloadavg(),
    }
    if args.mlflow:
        import mlflow

        from postgame.runtime import tracking_uri

        mlflow.set_tracking_uri(tracking_uri(cfg))
        mlflow.set_experiment(cfg.tracking.experiment)
        with mlflow.start_run(run_name="bench-learning"):
            mlflow.log_params({"model": args.model, "k": args.k, "seed": args.seed})
            mlflow.log_metrics(
                {
                    f"{r['split']}.{key}": r[key]
                    for r in rows
                    for key in ("pass_at_1", "pass_at_k", "empty", "random_edit", "well_formed")
                    if r[key] is not None
                }
            )
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(table(rows))
    return 0


def plot_losses(manifest_path: Path, out: Path) -> None:
    """The loss of each pre-training stage (mean per 25 steps), one curve over the whole run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    losses = json.loads(manifest_path.read_text())["losses"]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    start = 0
    for stage in ("lm", "curriculum", "repair"):  # the manifest's keys are sorted; the stages ran in this order
        curve = losses.get(stage, [])
        xs = [start + 25 * (i + 1) for i in range(len(curve))]
        ax.plot(xs, curve, marker=".", label=stage)
        start = xs[-1] if xs else start
    ax.set_xlabel("step (batches of 8)")
    ax.set_ylabel("loss (answer tokens; all tokens for lm)")
    ax.set_title(f"base pre-training: {manifest_path.parent.name}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def table(rows: list[dict]) -> str:
    """The markdown table BENCHMARKS.md shows."""
    k = rows[0]["k"] if rows else 1
    lines = [
        f"| split | tasks | pass@1 | pass@{k} | empty patch | random single edit | well-formed answers |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        at_k = f"{r['pass_at_k']:.1%}" if r["pass_at_k"] is not None else "-"
        lines.append(
            f"| {r['split']} | {r['instances']} | {r['pass_at_1']:.1%} | {at_k} | {r['empty']:.1%} | "
            f"{r['random_edit']:.1%} | {r['well_formed']:.1%} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
