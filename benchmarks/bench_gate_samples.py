"""What the gate can see with K sampled answers per instance (`promote.samples`), on registered versions of a home:
the paired test, its p-value and the gain it detects with 80% power at the churn measured, at K = 1 (the one
deterministic answer, exact McNemar) and at each K asked for (K answers sampled with the seeds both sides get, exact
sign-flip test on the per-instance counts), with the CPU seconds each costs. With `agent.enabled` (the default) an
answer is an episode: K = 1 the greedy one, K > 1 K sampled episodes.

    POSTGAME_HOME=~/postgame/.postgame .venv/bin/python benchmarks/bench_gate_samples.py \
        --pairs 1:2,2:3 [--k 1,4] [--json]

Each pair is champion:candidate: registered versions, or model directories (a base or a training run's `model/`).
Every answer is graded by the harness on the deciding split the gate grades (`promote.decide_split`,
`promote.eval_instances`, stratified by `promote.seed`), through the gate's own `models.evaluate.score_policy`, so
the figures are the ones a cycle with `promote.samples: K` would decide on. Nothing is registered, tagged or moved.
Results go to BENCHMARKS.md ("The gate with K samples").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models import registry
from models.evaluate import cache_key, graded_sets, score_policy
from models.policy import Policy
from models.stats import detectable_effect, detectable_gain, mcnemar_exact, sign_flip_exact
from postgame.config import Config, load_config
from postgame.runtime import resolve


def scores(cfg: Config, version: str, k: int, out: Path) -> tuple[dict[str, int], float]:
    """{instance id: attempts resolved} of a version on the deciding split with k answers, and the CPU seconds."""
    cfg_k = cfg.model_copy(update={"promote": cfg.promote.model_copy(update={"samples": k})})
    split, sets, _ = graded_sets(cfg_k)
    records = sets[split]
    if Path(version).is_dir():  # a model directory
        policy = Policy(Path(version), name=Path(version).parent.name, version="dir", settings=cfg_k.policy)
    else:
        info = registry.get_version(cfg_k, version)
        policy = Policy(
            registry.download_version(cfg_k, version), name=info.name, version=info.version, settings=cfg_k.policy
        )
    where = out / f"{policy.name}-{policy.version}-k{k}"
    s = score_policy(cfg_k, policy, records, where, split=split, key=cache_key(cfg_k, split, records))
    solved = {o.instance_id: (o.resolved_attempts) for o in s.outcomes if not o.error}
    return solved, s.cpu_seconds


def label(version: str) -> str:
    return version if Path(version).is_dir() else f"v{version}"


def compare(champion: dict[str, int], candidate: dict[str, int], k: int, sided: str, alpha: float) -> dict:
    ids = sorted(set(champion) & set(candidate))
    if not ids:
        raise SystemExit("no instance graded for both versions")
    diffs = [candidate[i] - champion[i] for i in ids]
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    p = mcnemar_exact(wins, losses, sided=sided) if k == 1 else sign_flip_exact(diffs, sided=sided)
    return {
        "n": len(ids),
        "champion_rate": sum(champion[i] for i in ids) / (k * len(ids)),
        "candidate_rate": sum(candidate[i] for i in ids) / (k * len(ids)),
        "gain": sum(diffs) / (k * len(ids)),
        "instances_better": wins,
        "instances_worse": losses,
        "p_value": p,
        # the gate's own figure (models.promote.decide): exact McNemar power at the loss rate for one answer, the
        # paired test's at the measured spread for K
        "detectable_gain": detectable_effect(len(ids), alpha=alpha, sided=sided, loss_rate=losses / len(ids))
        if k == 1
        else detectable_gain(diffs, k=k, alpha=alpha, sided=sided),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--pairs", required=True, help="champion:candidate pairs (versions or model dirs), comma-separated (1:2,2:3)"
    )
    ap.add_argument("--k", default="1,4", help="answers per instance to grade with, comma-separated")
    ap.add_argument("--config", default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cfg = load_config(args.config)
    resolve(cfg)
    out = cfg.home / "bench" / f"gate-samples-{int(time.time())}"
    ks = sorted({int(k) for k in args.k.split(",")})
    cache: dict[tuple[str, int], tuple[dict[str, int], float]] = {}
    rows = []
    for pair in args.pairs.split(","):
        a, b = pair.split(":")
        for k in ks:
            for v in (a, b):
                if (v, k) not in cache:
                    cache[v, k] = scores(cfg, v, k, out)
                    print(
                        f"{label(v)} K={k}: {sum(cache[v, k][0].values())} resolved answers, {cache[v, k][1]:.0f} CPU-s",
                        file=sys.stderr,
                    )
            row = {
                "champion": a,
                "candidate": b,
                "k": k,
                **compare(cache[a, k][0], cache[b, k][0], k, cfg.promote.sided, cfg.promote.alpha),
            }
            row["cpu_seconds"] = cache[a, k][1] + cache[b, k][1]
            rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        "| champion → candidate | K | n | champion | candidate | gain | better / worse | p | detectable (80 %) | CPU-s |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for r in rows:
        det = f"{100 * r['detectable_gain']:.1f} pts" if r["detectable_gain"] is not None else "—"
        print(
            f"| {label(r['champion'])} → {label(r['candidate'])} | {r['k']} | {r['n']} | {100 * r['champion_rate']:.1f} % | "
            f"{100 * r['candidate_rate']:.1f} % | {100 * r['gain']:+.1f} pts | {r['instances_better']} / "
            f"{r['instances_worse']} | {r['p_value']:.3g} | {det} | {r['cpu_seconds']:.0f} |"
        )


if __name__ == "__main__":
    main()
