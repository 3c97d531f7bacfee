"""Agent episodes of a real policy fanned out over local worker processes, with torch on each worker's share of the
cores (`runner.torch_threads: 0`, the default: cores // workers) against torch's own default (every core in every worker),
side by side in one run.

    python benchmarks/bench_episode_threads.py [--policy models/base_agent] [--rounds 2] [--workers 2] [--json]

Each round plays one greedy episode per harness example instance (the shipped agent base, the scaffold's 6 beams a
turn, run_tests in the sandbox, the harness's grade at submit) through a process runner of `--workers` workers, once
with each setting, in alternating order; every worker is a fresh process (its first episode loads the model). The
figure is episodes per minute and the wall-time ratio, with the turns and the outcome of every episode, which should
match between the two settings (greedy decoding: a different thread count may only reorder float sums).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def play(cfg, instances, repos: Path, policy: Path, out: Path) -> tuple[float, list[tuple[str, str, int]]]:
    from evals.agent.batch import run_episodes
    from models.agent import policy_factory

    start = time.perf_counter()
    report = run_episodes(
        instances,
        policy_factory(cfg, policy, "bench", greedy=True),
        agent=cfg.agent,
        harness=cfg.eval,
        repos_dir=repos,
        out_dir=out,
        runner=cfg.runner,
    )
    wall = time.perf_counter() - start
    return wall, sorted((i, r["outcome"], r["turns"]) for i, r in report.instances.items())


def main() -> None:
    from evals.harness.examples import INSTANCES_FILE
    from evals.harness.examples.build import build_repos
    from evals.harness.instance import load_instances
    from models.agent import episode_threads
    from models.policy import SHIPPED_AGENT_BASE
    from postgame.config import Config

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policy", type=Path, default=SHIPPED_AGENT_BASE)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    instances = load_instances(INSTANCES_FILE)
    base = Config(runner={"kind": "process", "workers": args.workers})
    settings = {
        "shared out (torch_threads 0)": base,
        "torch default (every core)": Config(
            runner={"kind": "process", "workers": args.workers, "torch_threads": os.cpu_count() or 1}
        ),
    }
    walls: dict[str, list[float]] = {name: [] for name in settings}
    episodes: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        repos = Path(tmp) / "repos"
        build_repos(repos)
        for r in range(args.rounds):
            order = list(settings.items()) if r % 2 == 0 else list(reversed(settings.items()))
            for name, cfg in order:
                wall, outcomes = play(cfg, instances, repos, args.policy, Path(tmp) / f"out-{r}-{len(walls[name])}")
                walls[name].append(wall)
                episodes.setdefault(name, outcomes)
    n = len(instances)
    rows = {
        name: {
            "threads_per_worker": episode_threads(cfg) or os.cpu_count(),
            "median_wall_s": statistics.median(walls[name]),
            "episodes_per_min": 60 * n / statistics.median(walls[name]),
            "walls_s": [round(w, 1) for w in walls[name]],
        }
        for name, cfg in settings.items()
    }
    shared, default = (rows[name]["median_wall_s"] for name in settings)
    result = {
        "workers": args.workers,
        "cores": os.cpu_count(),
        "episodes_per_round": n,
        "rows": rows,
        "ratio_default_over_shared": default / shared,
        "same_episodes": len({json.dumps(v) for v in episodes.values()}) == 1,
        "episodes": episodes,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{n} episodes a round, {args.rounds} rounds, {args.workers} process workers on {os.cpu_count()} cores")
    for name, row in rows.items():
        print(
            f"  {name:32} {row['threads_per_worker']} threads/worker  median {row['median_wall_s']:.1f} s  "
            f"{row['episodes_per_min']:.1f} episodes/min  (rounds: {row['walls_s']})"
        )
    print(f"  torch default / shared out: {result['ratio_default_over_shared']:.2f}x the wall time")
    print(f"  same outcomes and turns both ways: {result['same_episodes']}")


if __name__ == "__main__":
    main()
