"""What the sandboxed test runner's bytecode is worth: a sandboxed harness run of a gold patch, and agent episodes,
with the bytecode of pytest and what it requires absent (as `pip install --no-compile` leaves a venv, and as every
sandboxed run found it before `evals.harness.sandbox.compile_runner`) against present, interleaved in one run.

    .venv/bin/python benchmarks/bench_runner_bytecode.py [--reps 5]
    POSTGAME_HOME=~/postgame/.postgame .venv/bin/python benchmarks/bench_runner_bytecode.py --episodes 20

- harness: `evaluate(instance, gold)` on each example instance (evals/harness/examples), `--reps` times a side,
  the two sides interleaved; medians of wall seconds a run, and the ratio.
- episodes (`--episodes N`, a home with a task world): the shipped agent base's greedy episodes on the first N dev
  instances through `models.evaluate.agent_episodes` on the serial runner (in this process, so the cold side stays
  cold), cold first, then warm; wall seconds, sandboxed runs and their seconds, and the resolved count of each side
  (the same episodes: bytecode changes no output).

The cold side deletes the `__pycache__/*.pyc` of `sandbox.runner_sources()` outside the stdlib (this venv's, written
again by the warm side; the stdlib's come with Python's install) and keeps `compile_runner` from writing them; the
sandbox runs Python with -B, so nothing inside writes them.
Results go to BENCHMARKS.md ("Session 36: the sandboxed test runner's bytecode").
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.harness import HarnessSettings, evaluate, load_instances, sandbox
from evals.harness.examples import INSTANCES_FILE
from evals.harness.examples.build import build_repos
from evals.harness.sandbox import choose_mode

_compile_runner = sandbox.compile_runner


@contextmanager
def runner_bytecode(present: bool) -> Iterator[None]:
    """The runner's bytecode written (as `compile_runner` does), or deleted and kept from being written."""
    if present:
        _compile_runner.cache_clear()
        _compile_runner()
        yield
        return
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    for source in sandbox.runner_sources():
        if stdlib not in source.resolve().parents:  # the stdlib's bytecode comes with Python's install: kept
            Path(importlib.util.cache_from_source(str(source))).unlink(missing_ok=True)
    sandbox.compile_runner = lambda: 0  # type: ignore[assignment]  # sandbox.run calls it by its module name
    try:
        yield
    finally:
        sandbox.compile_runner = _compile_runner


@contextmanager
def counted_runs() -> Iterator[list[float]]:
    """The wall seconds of every sandboxed run made meanwhile."""
    seconds: list[float] = []
    real = sandbox.run

    def run(*args, **kwargs):
        result = real(*args, **kwargs)
        seconds.append(result.seconds)
        return result

    sandbox.run = run  # type: ignore[assignment]
    try:
        yield seconds
    finally:
        sandbox.run = real  # type: ignore[assignment]


def harness_runs(reps: int) -> list[dict]:
    settings = HarnessSettings(timeout_s=120)
    work = Path(tempfile.mkdtemp(prefix="bench-bytecode-"))
    try:
        repos = work / "repos"
        build_repos(repos)
        instances = load_instances(INSTANCES_FILE)
        evaluate(instances[0], instances[0].patch, repos_dir=repos, settings=settings)  # the probe, the exports
        rows = []
        for inst in instances:
            times: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(reps):
                for present in (False, True):
                    with runner_bytecode(present):
                        t = time.perf_counter()
                        result = evaluate(inst, inst.patch, repos_dir=repos, settings=settings)
                        times[present].append(time.perf_counter() - t)
                    assert result.resolved, result.log
            rows.append(
                {
                    "instance": inst.instance_id,
                    "cold": statistics.median(times[False]),
                    "warm": statistics.median(times[True]),
                }
            )
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def episodes(n: int) -> dict:
    from evals.factory.instances import load_split
    from models.evaluate import agent_episodes
    from models.policy import SHIPPED_AGENT_BASE
    from postgame.config import load_config

    cfg = load_config()
    cfg = cfg.model_copy(update={"runner": cfg.runner.model_copy(update={"kind": "serial"})})
    instances = sorted(load_split(cfg, "dev"), key=lambda i: i.instance_id)[:n]
    out = Path(tempfile.mkdtemp(prefix="bench-bytecode-episodes-"))
    sides = {}
    try:
        agent_episodes(
            cfg, SHIPPED_AGENT_BASE, "agent-base", instances[:1], out / "load"
        )  # the model loaded, imports done
        for present in (False, True):
            with runner_bytecode(present), counted_runs() as runs:
                t = time.perf_counter()
                report = agent_episodes(cfg, SHIPPED_AGENT_BASE, "agent-base", instances, out / str(present))
                wall = time.perf_counter() - t
            sides["warm" if present else "cold"] = {
                "seconds": round(wall, 1),
                "resolved": report.resolved,
                "sandboxed_runs": len(runs),
                "sandboxed_seconds": round(sum(runs), 1),
                "median_run_s": round(statistics.median(runs), 3) if runs else None,
            }
        return sides
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--episodes", type=int, default=0, help="dev episodes a side (needs a task world in the home)")
    args = parser.parse_args()
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; sandbox: "
        f"{choose_mode(HarnessSettings())[0]}; python {sys.version.split()[0]}; "
        f"{len(sandbox.runner_sources())} runner sources"
    )
    rows = harness_runs(args.reps)
    print("\n| instance | no bytecode s (median) | bytecode s (median) | ratio |\n|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['instance']} | {r['cold']:.3f} | {r['warm']:.3f} | {r['cold'] / r['warm']:.2f}x |")
    cold, warm = sum(r["cold"] for r in rows), sum(r["warm"] for r in rows)
    print(f"| **all (sums)** | {cold:.3f} | {warm:.3f} | **{cold / warm:.2f}x** |")
    if args.episodes:
        print("\nepisodes:", json.dumps(episodes(args.episodes)))


if __name__ == "__main__":
    main()
