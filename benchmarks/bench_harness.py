"""Benchmark of the evaluation harness: its seconds per instance against the same tests run bare with pytest, as a
ratio in one run, and instances per minute with 1 and 2 workers.

    .venv/bin/python benchmarks/bench_harness.py [--reps 5] [--copies 2]

Per example instance (evals/harness/examples), interleaved, `--reps` times each, medians:
- harness: `evaluate(instance, gold)` end to end: fresh copy of the base, patch, grader protection, test patch,
  pytest in the sandbox (bwrap here, else rlimits: printed), grading;
- bare: `python -m pytest -rA <the same test files>` in a fresh checkout already holding the gold and test patches
  (a fresh copy per repetition, so neither side reuses bytecode written by an earlier run).
Medians and minimums of wall seconds are both reported: on a shared machine the minimum (least disturbed run) is the
steadier estimate of the overhead. Throughput: `run_evaluation` of every example's gold patch `--copies` times (distinct instance ids, no cache), with
1 and then 2 workers. The machine's core count and load average are printed with the numbers: other work on the
machine moves both sides of the ratio alike, not the throughput.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.harness import HarnessSettings, Prediction, evaluate, load_instances, run_evaluation
from evals.harness.environment import base_tree, fresh_copy
from evals.harness.examples import INSTANCES_FILE
from evals.harness.examples.build import build_repos
from evals.harness.patching import apply_patch, patch_paths
from evals.harness.sandbox import choose_mode
from evals.harness.testrun import _test_files, pytest_args


def bare_checkout(instance, repos: Path, dest: Path) -> tuple[Path, list[str]]:
    base, source = base_tree(instance, repos)
    copy = fresh_copy(base, dest)
    for patch in (instance.patch, instance.test_patch):
        assert apply_patch(copy, patch, base_dir=base, source=source).applied
    return copy, pytest_args(instance, _test_files(copy, patch_paths(instance.test_patch)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--copies", type=int, default=2)
    args = parser.parse_args()
    settings = HarnessSettings(timeout_s=120)
    work = Path(tempfile.mkdtemp(prefix="bench-harness-"))
    try:
        repos = work / "repos"
        build_repos(repos)
        instances = load_instances(INSTANCES_FILE)
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; "
              f"sandbox: {choose_mode(settings)[0]}; python {sys.version.split()[0]}")
        evaluate(instances[0], instances[0].patch, repos_dir=repos, settings=settings)  # warm: probe, exports

        rows = []
        for inst in instances:
            harness, bare = [], []
            checkout, test_args = bare_checkout(inst, repos, work / f"{inst.instance_id}-ref")
            for rep in range(args.reps):
                t = time.perf_counter()
                result = evaluate(inst, inst.patch, repos_dir=repos, settings=settings)
                harness.append(time.perf_counter() - t)
                assert result.resolved, result.log
                run_dir = work / f"{inst.instance_id}-bare-{rep}"
                shutil.copytree(checkout, run_dir, symlinks=True)
                t = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "pytest", *test_args], cwd=run_dir,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                bare.append(time.perf_counter() - t)
                assert done.returncode == 0
                shutil.rmtree(run_dir)
            med = statistics.median
            rows.append((inst.instance_id, med(harness), med(bare), min(harness), min(bare)))

        print("\n| instance | harness s (median) | bare pytest s (median) | ratio | harness s (min) | bare s (min) | ratio |"
              "\n|---|---:|---:|---:|---:|---:|---:|")
        for iid, h, b, hm, bm in rows:
            print(f"| {iid} | {h:.3f} | {b:.3f} | {h / b:.2f}x | {hm:.3f} | {bm:.3f} | {hm / bm:.2f}x |")
        th, tb, thm, tbm = (sum(r[i] for r in rows) for i in range(1, 5))
        print(f"| **all (sums)** | {th:.3f} | {tb:.3f} | **{th / tb:.2f}x** | {thm:.3f} | {tbm:.3f} | **{thm / tbm:.2f}x** |")

        batch = [inst.model_copy(update={"instance_id": f"{inst.instance_id}-{n}"})
                 for n in range(args.copies) for inst in instances]
        preds = [Prediction(instance_id=i.instance_id, model_patch=i.patch) for i in batch]
        print("\n| workers | instances | seconds | instances/min |\n|---:|---:|---:|---:|")
        for workers in (1, 2):
            t = time.perf_counter()
            report = run_evaluation(batch, preds, repos_dir=repos, out_dir=work / f"out-{workers}", settings=settings,
                                    workers=workers, progress=False)
            seconds = time.perf_counter() - t
            assert len(report.resolved_ids) == len(batch), report.to_dict()
            print(f"| {workers} | {len(batch)} | {seconds:.1f} | {60 * len(batch) / seconds:.1f} |")
        print(f"\nload average {os.getloadavg()[0]:.2f} at end")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
