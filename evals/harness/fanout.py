"""Evaluation fan-out: one harness `evaluate(...)` per instance, submitted through the configured task runner.

    from postgame.runners import prefect_mapper
    from evals.harness.fanout import evaluate_instances

    with prefect_mapper(cfg.runner) as mapper:                       # inside a flow: each instance a task run
        report = evaluate_instances(instances, predictions, repos_dir=None, out_dir=out_dir, settings=cfg.eval,
                                    mapper=mapper)                   # -> evals.harness.RunReport

It returns the `RunReport` that `evals.harness.run_evaluation` returns and writes the same files (`out_dir/report.json`
and per instance `patch.diff`, `test_output.txt`, `report.json`), but each instance is graded wherever the runner
sends it: a local process (`runner.kind: process`), a thread, or a Dask worker (`runner.kind: dask`). Workers return
the graded result; the files are written here, so a worker needs no access to `out_dir`. Each worker needs the
postgame package, bubblewrap (the harness sandbox), and the instances' repositories (`repos_dir`, or the store's
environment exports that `evals.harness.environment` reads). The cycle's evaluate stage grades through it: the Prefect
task (`tasks/evaluate.py`) opens the mapper of `runner:` and hands it to `models.evaluate`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from evals.harness import HarnessSettings, Instance, Prediction
from postgame.runners import Mapper


@dataclass(frozen=True)
class EvalJob:
    """One instance to grade: everything a worker needs, picklable."""

    instance: Instance
    prediction: Prediction
    repos_dir: str | None
    settings: HarnessSettings


def evaluate_one(job: EvalJob):
    """The unit of work: the harness grades one patch (never raises: a harness failure is that instance's error)."""
    from evals.harness import evaluate

    return evaluate(
        job.instance,
        job.prediction.model_patch,
        repos_dir=job.repos_dir,
        settings=job.settings,
        model_name_or_path=job.prediction.model_name_or_path,
    )


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", errors="replace")
    tmp.replace(path)


def evaluate_instances(
    instances: Iterable[Instance],
    predictions: Iterable[Prediction],
    *,
    repos_dir: str | Path | None,
    out_dir: str | Path,
    settings: HarnessSettings,
    mapper: Mapper,
):
    """Grade every prediction whose instance is known, one unit of work per instance through `mapper`; write the
    reports as `run_evaluation` does and return its `RunReport` (same fields, same order of ids)."""
    from evals.harness.run import finish_report, instance_dir_name

    start = time.monotonic()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    by_id = {i.instance_id: i for i in instances}
    preds = {p.instance_id: p for p in predictions}
    jobs = [
        EvalJob(by_id[iid], preds[iid], str(repos_dir) if repos_dir else None, settings)
        for iid in by_id
        if iid in preds
    ]
    results = {}
    for job, result in zip(jobs, mapper(evaluate_one, jobs)):
        d = out / instance_dir_name(job.instance.instance_id)
        d.mkdir(parents=True, exist_ok=True)
        _write(d / "patch.diff", job.prediction.model_patch)
        _write(d / "test_output.txt", result.log)
        _write(d / "report.json", json.dumps({job.instance.instance_id: result.to_report()}, indent=2))
        results[job.instance.instance_id] = result
    return finish_report(by_id, preds, results, settings, start, out)
