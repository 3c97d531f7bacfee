"""Traffic on bugs the base never trained on: does training on its own graded answers there lift the deciding split?

    POSTGAME_HOME=<home> OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_fresh_traffic.py [--pool dev] \
        [--seeds 11 12 13] [--lrs 1e-4 5e-4] [--mode sft|dpo] [--out DIR] [--json]

The default traffic (`postgame simulate`) serves the train split, whose bugs and gold answers are in the base's own
training, so it can teach the base nothing (BENCHMARKS.md, "Session 19"). This asks the question a production pool
would answer, without the base rebuild one needs: the base serves `--pool` (default `dev`: bugs it never trained on,
standing in for new production work) once per seed, sampled through the product's scaffold as traffic is, each answer
graded by the harness. `--mode sft`: its resolved answers become SFT rows; `--mode dpo`: each resolved answer is paired
with each failed answer to the same bug (what the grade says the base lacks: which of its own answers is right).
Each candidate (from the base, the cycle's trainer `models.train.fit`, the `train:` settings with the mode and the
learning rate of `--lrs`) and the base answer the gate's deciding split, scored and
decided as the gate does (`bench_tune.score` / `bench_tune.compare`: `models.promote.decide`, the base as champion).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tune import compare, score

from postgame.config import answering_once, load_config


def served_answers(cfg, pool: str, seeds: list[int], out: Path, say) -> list[dict]:
    """The base's sampled answers to every bug of `pool` (one round a seed, through the product's scaffold), each
    with the harness's grade: {instance_id, prompt, completion, resolved, seed}."""
    from evals.factory.instances import load_records, prompt_for
    from evals.harness import Prediction
    from evals.prompts import extract_patch
    from models.answer import submit
    from models.evaluate import _instances, grade_predictions
    from models.policy import Policy, base_policy_dir

    records = sorted(load_records(cfg, pool), key=lambda r: r["instance_id"])
    if not records:
        sys.exit(f"split {pool!r} has no instances in the current task catalog")
    instances = _instances(cfg, records)
    prompts = [prompt_for(cfg, i) for i in instances]
    policy = Policy(base_policy_dir(cfg), name="base", version="base", settings=cfg.policy)
    served: list[dict] = []
    for seed in seeds:
        answers = submit(policy, prompts, cfg.scaffold, instances=instances, harness=cfg.eval, seed=seed)
        predictions = [
            Prediction(instance_id=i.instance_id, model_name_or_path="base", model_patch=extract_patch(a.text))
            for i, a in zip(instances, answers)
        ]
        report = grade_predictions(cfg.eval, instances, predictions, out / f"traffic-{seed}")
        for inst, prompt, answer in zip(instances, prompts, answers):
            result = report.results.get(inst.instance_id)
            served.append(
                {
                    "instance_id": inst.instance_id,
                    "prompt": prompt,
                    "completion": answer.text,
                    "resolved": result.resolved if result is not None else None,  # None: not graded (infra)
                    "seed": seed,
                }
            )
        say(
            {
                "traffic_seed": seed,
                "resolved": sum(a["resolved"] is True for a in served[-len(instances) :]),
                "of": len(instances),
            }
        )
    return served


def sft_rows(served: list[dict]) -> list[dict]:
    """One SFT row per distinct resolved answer."""
    rows: dict[tuple[str, str], dict] = {}
    for a in served:
        if a["resolved"] is True:
            rows.setdefault(
                (a["instance_id"], a["completion"]),
                {
                    "kind": "sft",
                    "example_id": f"sft:{a['instance_id']}:{a['seed']}",
                    "instance_id": a["instance_id"],
                    "prompt": a["prompt"],
                    "completion": a["completion"],
                },
            )
    return list(rows.values())


def dpo_rows(served: list[dict]) -> list[dict]:
    """DPO pairs from the same bug: each distinct resolved answer against each distinct graded failure (an
    ungraded answer is in neither side)."""
    by_bug: dict[str, dict[bool, dict[str, dict]]] = {}
    for a in served:
        if a["resolved"] is not None:
            by_bug.setdefault(a["instance_id"], {True: {}, False: {}})[a["resolved"]].setdefault(a["completion"], a)
    rows = []
    for iid, sides in sorted(by_bug.items()):
        for n, (good, bad) in enumerate((g, b) for g in sides[True].values() for b in sides[False].values()):
            rows.append(
                {
                    "kind": "dpo",
                    "example_id": f"dpo:{iid}:{n}",
                    "instance_id": iid,
                    "prompt": good["prompt"],
                    "chosen": good["completion"],
                    "rejected": bad["completion"],
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pool", default="dev", help="The split the base serves as traffic (never the deciding one).")
    parser.add_argument("--seeds", nargs="+", type=int, default=[11, 12, 13])
    parser.add_argument("--lrs", nargs="+", type=float, default=[1e-4, 5e-4])
    parser.add_argument(
        "--mode",
        choices=["sft", "dpo"],
        default="sft",
        help="sft: the resolved answers; dpo: resolved against failed answers to the same bug.",
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--config", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from evals.factory.instances import load_records
    from models.policy import base_policy_dir
    from models.train import TrainJob, fit

    cfg = answering_once(load_config(args.config))  # it measures the single answer
    decide_split = cfg.promote.decide_split
    if args.pool == decide_split:
        sys.exit(f"--pool {args.pool!r} is the gate's deciding split: serve another (dev)")
    out = args.out or cfg.home / "bench" / "fresh-traffic" / time.strftime("%Y%m%dT%H%M%S")
    lines: list[dict] = []

    def say(line: dict) -> None:
        lines.append(line)
        if not args.json:
            print(json.dumps(line), flush=True)

    started = time.monotonic()
    served = served_answers(cfg, args.pool, args.seeds, out, say)
    rows = sft_rows(served) if args.mode == "sft" else dpo_rows(served)
    say({"mode": args.mode, "rows": len(rows), "bugs": len({r["instance_id"] for r in rows})})
    records = sorted(load_records(cfg, decide_split), key=lambda r: r["instance_id"])
    base = score(cfg, base_policy_dir(cfg), "base", records, decide_split, out)
    say({"run": "base", "resolved": sum(o.resolved for o in base.outcomes), "n": base.n})
    for lr in args.lrs:
        settings = cfg.train.model_copy(update={"method": args.mode, "learning_rate": lr})
        job = TrainJob(args.mode, base_policy_dir(cfg), rows, out / f"{args.mode}-{lr:g}", settings, policy=cfg.policy)
        result = fit(job)
        cand = score(cfg, Path(result.output_dir), f"{args.mode}-{lr:g}", records, decide_split, out)
        say(
            {
                "run": f"{args.mode} lr {lr:g}",
                "rows": len(rows),
                "train_s": round(result.seconds, 1),
                **compare(cfg, base, cand),
            }
        )
    say({"seconds": round(time.monotonic() - started, 1)})
    if args.json:
        print(json.dumps({"pool": args.pool, "decide_split": decide_split, "lines": lines}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
