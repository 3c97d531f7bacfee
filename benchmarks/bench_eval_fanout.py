"""Benchmark of the evaluation fan-out (evals/harness/fanout.py): instances per minute through each runner, side by side
with the harness's own thread pool (`run_evaluation`) in one run.

    nice .venv/bin/python benchmarks/bench_eval_fanout.py [--copies 2]

Every example instance of evals/harness/examples with its gold patch, `--copies` times (distinct ids, no cache), so
each unit of work is one full sandboxed pytest run. Rows: `run_evaluation` with 1 and 2 threads (the reference),
`evaluate_instances` through a local process pool of 1 and 2 workers, and through a Dask LocalCluster of 2
single-threaded worker processes. The engines are driven without Prefect (`postgame.runners.local_mapper`): the
Prefect task run bookkeeping is the same for every runner and is not what is measured. Core count and load average
are printed with the numbers: on a shared machine other work slows every row alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.harness import HarnessSettings, Prediction, load_instances, run_evaluation
from evals.harness.examples import INSTANCES_FILE
from evals.harness.examples.build import build_repos
from evals.harness.fanout import evaluate_instances
from postgame.runners import local_mapper
from postgame.settings.runner import RunnerSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=2)
    args = parser.parse_args()
    settings = HarnessSettings(timeout_s=120)
    work = Path(tempfile.mkdtemp(prefix="bench-fanout-"))
    try:
        repos = work / "repos"
        build_repos(repos)
        instances = load_instances(INSTANCES_FILE)
        batch = [
            inst.model_copy(update={"instance_id": f"{inst.instance_id}-{n}"})
            for n in range(args.copies)
            for inst in instances
        ]
        preds = [Prediction(instance_id=i.instance_id, model_patch=i.patch) for i in batch]
        print(
            f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; {len(batch)} instances"
        )
        rows = []
        for workers in (1, 2):
            t = time.perf_counter()
            report = run_evaluation(
                batch,
                preds,
                repos_dir=repos,
                out_dir=work / f"threads-{workers}",
                settings=settings,
                workers=workers,
                progress=False,
            )
            rows.append((f"run_evaluation, {workers} thread(s) (reference)", report, time.perf_counter() - t))
        for name, runner in (
            ("process pool, 1 worker", RunnerSettings(kind="process", workers=1)),
            ("process pool, 2 workers", RunnerSettings(kind="process", workers=2)),
            ("Dask LocalCluster, 2 workers", RunnerSettings(kind="dask", workers=2)),
        ):
            t = time.perf_counter()
            with local_mapper(runner) as mapper:  # start-up of the pool / cluster counted
                report = evaluate_instances(
                    batch,
                    preds,
                    repos_dir=repos,
                    out_dir=work / name.replace(" ", "_"),
                    settings=settings,
                    mapper=mapper,
                )
            rows.append((name, report, time.perf_counter() - t))
        print("\n| runner | instances | resolved | seconds | instances/min |\n|---|---:|---:|---:|---:|")
        for name, report, seconds in rows:
            print(
                f"| {name} | {len(batch)} | {len(report.resolved_ids)} | {seconds:.1f} | "
                f"{60 * len(batch) / seconds:.1f} |"
            )
        print(f"\nload average {os.getloadavg()[0]:.2f} at end")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
