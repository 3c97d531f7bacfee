"""An agent's traffic played in batches, each through a pool of its own (as `simulate` played it before 2026-12-08),
against all at once through one pool (as it plays now), interleaved in one run: wall seconds, and whether the
episodes are the same.

    POSTGAME_HOME=~/postgame/.postgame .venv/bin/python benchmarks/bench_traffic_pool.py [--sessions 96] [--batch 8]

Both sides call the traffic's own `play` (`models.traffic._agent_play`: the shipped agent base's sampled episodes
through the configured runner, `runner.kind: process` by default, so a call opens a spawn pool whose workers import
torch and load the model) on the same `--sessions` train tasks drawn as `simulate` draws them; "batches" calls it once
per `--batch` tasks, "at once" once. Needs a home with the task world (`postgame up`, `postgame factory build`).
Results go to BENCHMARKS.md ("Session 36: the traffic in one pool").
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    from evals.factory.instances import load_split, prompt_for
    from models.policy import SHIPPED_AGENT_BASE, Policy
    from models.traffic import _agent_play
    from postgame.config import load_config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=96)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    cfg = load_config()
    train = load_split(cfg, "train")
    rng = random.Random("bench-traffic-pool")
    tasks = [train[rng.randrange(len(train))] for _ in range(args.sessions)]
    prompts = [prompt_for(cfg, t) for t in tasks]
    policy = Policy(SHIPPED_AGENT_BASE, name="agent-base", version="shipped", settings=cfg.policy)
    play = _agent_play(cfg, policy, seed=cfg.factory.seed)

    def batches() -> list[dict]:
        records = []
        for i in range(0, len(tasks), args.batch):
            records += play(tasks[i : i + args.batch], prompts[i : i + args.batch])
        return records

    def at_once() -> list[dict]:
        return play(tasks, prompts)

    sides = {}
    for name, run in (("batches", batches), ("at_once", at_once)):
        start = time.perf_counter()
        records = run()
        sides[name] = {
            "seconds": round(time.perf_counter() - start, 1),
            "resolved": sum(bool(r["resolved"]) for r in records),
            "messages": [r["messages"] for r in records],
        }
    same = sides["batches"]["messages"] == sides["at_once"]["messages"]
    out = {
        "runner": cfg.runner.kind,
        "workers": cfg.runner.workers,
        "sessions": args.sessions,
        "batch": args.batch,
        **{n: {k: v for k, v in s.items() if k != "messages"} for n, s in sides.items()},
        "ratio": round(sides["batches"]["seconds"] / sides["at_once"]["seconds"], 2),
        "same_episodes": same,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
