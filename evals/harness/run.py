"""Evaluate many predictions in parallel and write SWE-bench-shaped reports.

    postgame eval run --instances F.jsonl --predictions P.jsonl --repos DIR --out OUTDIR [--workers N]

Writes `OUTDIR/report.json` (summary in SWE-bench's shape + `instances`: per-instance reports) and, per instance,
`OUTDIR/<instance_id>/{patch.diff,test_output.txt,report.json}`. One bad instance never stops the batch: a missing
repository or a harness failure is that instance's `error`, with the reason.

Differences from SWE-bench's summary, on purpose: an empty patch is in `empty_patch_ids` and also in
`unresolved_ids` (it resolves nothing), and `completed_*` counts every instance graded without an infrastructure
error. Predictions for unknown instances are listed in `unknown_prediction_ids` and not run.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.harness.constants import GradeStatus
from evals.harness.evaluator import GradeCache, GradeResult, error_result, evaluate
from evals.harness.instance import Instance, Prediction
from postgame.console import progress_bar
from postgame.settings.harness import HarnessSettings

if TYPE_CHECKING:
    from evals.harness.repoenv import EnvCache


@dataclass
class RunReport:
    total_instances: int
    submitted_ids: list[str]
    completed_ids: list[str]
    incomplete_ids: list[str]
    resolved_ids: list[str]
    unresolved_ids: list[str]
    error_ids: list[str]
    empty_patch_ids: list[str]
    unknown_prediction_ids: list[str]
    sandbox: str
    seconds: float
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)
    results: dict[str, GradeResult] = field(default_factory=dict, repr=False)

    @property
    def resolved_rate(self) -> float:
        return len(self.resolved_ids) / self.total_instances if self.total_instances else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "total_instances": self.total_instances,
            "submitted_instances": len(self.submitted_ids),
            "completed_instances": len(self.completed_ids),
            "resolved_instances": len(self.resolved_ids),
            "unresolved_instances": len(self.unresolved_ids),
            "empty_patch_instances": len(self.empty_patch_ids),
            "error_instances": len(self.error_ids),
            "completed_ids": self.completed_ids,
            "incomplete_ids": self.incomplete_ids,
            "empty_patch_ids": self.empty_patch_ids,
            "submitted_ids": self.submitted_ids,
            "resolved_ids": self.resolved_ids,
            "unresolved_ids": self.unresolved_ids,
            "error_ids": self.error_ids,
            "unknown_prediction_ids": self.unknown_prediction_ids,
            "schema_version": 2,
            "resolved_rate": self.resolved_rate,
            "sandbox": self.sandbox,
            "seconds": round(self.seconds, 3),
            "instances": self.instances,
        }


def instance_dir_name(instance_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", instance_id) or "_"


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", errors="replace")
    tmp.replace(path)


def run_evaluation(
    instances: Iterable[Instance],
    predictions: Iterable[Prediction],
    *,
    repos_dir: str | Path | None,
    out_dir: str | Path,
    settings: HarnessSettings,
    workers: int | None = None,
    reruns: int | None = None,
    progress: bool = True,
    cache: GradeCache | None = None,
    envs: EnvCache | None = None,
) -> RunReport:
    """Grade every prediction whose instance is known; write the reports; return the run report.

    `workers` and `reruns` default to the settings (`workers: 0` = one per core). `envs` keeps per-repository
    environments (instances with `env_spec`): pass one with the object store to share builds across machines.
    `progress`: a bar out of the instances on stderr while they are graded (postgame.console.progress_bar: only on a
    terminal).
    """

    start = time.monotonic()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    by_id = {i.instance_id: i for i in instances}
    preds = {p.instance_id: p for p in predictions}
    jobs = [(by_id[iid], preds[iid]) for iid in by_id if iid in preds]
    n_workers = max(1, workers or settings.workers or os.cpu_count() or 1)
    results: dict[str, GradeResult] = {}

    def job(instance: Instance, pred: Prediction) -> GradeResult:
        d = out / instance_dir_name(instance.instance_id)
        try:
            d.mkdir(parents=True, exist_ok=True)
            _write(d / "patch.diff", pred.model_patch)
            result = evaluate(
                instance,
                pred.model_patch,
                repos_dir=repos_dir,
                settings=settings,
                cache=cache,
                reruns=reruns,
                model_name_or_path=pred.model_name_or_path,
                envs=envs,
            )
            _write(d / "test_output.txt", result.log)
            _write(d / "report.json", json.dumps({instance.instance_id: result.to_report()}, indent=2))
            return result
        except Exception as exc:  # noqa: BLE001 - disk errors and the like: this instance's error, not the batch's
            return error_result(
                instance.instance_id, f"{type(exc).__name__}: {exc} (logs: {d})", pred.model_name_or_path
            )

    with (
        progress_bar("eval", len(jobs), enabled=progress) as tell,
        ThreadPoolExecutor(max_workers=n_workers, thread_name_prefix="eval") as pool,
    ):
        futures = {pool.submit(job, inst, pred): inst.instance_id for inst, pred in jobs}
        for fut in as_completed(futures):
            results[futures[fut]] = fut.result()
            tell(f"{sum(r.resolved for r in results.values())} resolved", 1)

    return finish_report(by_id, preds, results, settings, start, out)


def finish_report(
    by_id: dict, preds: dict, results: dict, settings: HarnessSettings, start: float, out: Path
) -> RunReport:
    """The run report of graded `results` (SWE-bench's shape), written to `out/report.json`; shared by every way of
    running a batch (threads here, a mapper over a task runner in `evals.harness.fanout`)."""
    from evals.harness.sandbox import choose_mode

    ordered = [iid for iid in by_id if iid in results]
    report = RunReport(
        total_instances=len(by_id),
        submitted_ids=ordered,
        completed_ids=[i for i in ordered if results[i].status != GradeStatus.ERROR.value],
        incomplete_ids=[i for i in by_id if i not in results],
        resolved_ids=[i for i in ordered if results[i].resolved],
        unresolved_ids=[i for i in ordered if results[i].status == GradeStatus.UNRESOLVED.value],
        error_ids=[i for i in ordered if results[i].status == GradeStatus.ERROR.value],
        empty_patch_ids=[i for i in ordered if not results[i].patch_exists],
        unknown_prediction_ids=sorted(set(preds) - set(by_id)),
        sandbox=choose_mode(settings)[0] or "none",
        seconds=time.monotonic() - start,
        instances={i: results[i].to_report() for i in ordered},
        results={i: results[i] for i in ordered},
    )
    _write(out / "report.json", json.dumps(report.to_dict(), indent=2))
    return report
