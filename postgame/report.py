"""The cycle report: what a cycle cost and what it gained (intelligence per dollar).

Cost is measured, not estimated: the CPU seconds this process and its children spent during the cycle, priced at
`cost.usd_per_cpu_hour`. Gain is the candidate's metric over the champion's on the same instances, counted only when
the candidate was promoted.
"""

from __future__ import annotations

import resource
import time

from pydantic import BaseModel

from postgame.config import Config


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class CycleStart(BaseModel):
    run_id: str
    experiment_id: str
    started_at: float
    cpu_seconds_at_start: float


class CycleReport(BaseModel):
    run_id: str
    status: str  # "completed", or "skipped" when no snapshot was pending
    snapshot_ids: list[str]
    records_ingested: int
    quarantined: dict[str, int]
    validation_warnings: list[str] = []
    dataset_uri: str | None = None
    train_method: str | None = None
    train_steps: int = 0
    eval_split: str | None = None
    candidate_metric: float | None = None
    champion_metric: float | None = None
    metric: str
    version: str | None = None
    model_uri: str | None = None
    promoted: bool = False
    decision: str = ""
    champion_version: str | None = None
    seconds: float
    cpu_seconds: float
    cost_usd: float
    gain: float = 0.0
    gain_per_dollar: float | None = None
    urls: dict[str, str] = {}

    def summary(self) -> str:
        head = (f"cycle {self.run_id}: {len(self.snapshot_ids)} snapshot(s) "
                f"{', '.join(s[:12] for s in self.snapshot_ids) or '-'}; ingested {self.records_ingested} sessions, "
                f"quarantined {self.quarantined}")
        if self.status == "skipped":
            return "\n".join([head, "  nothing new to learn from: no pending snapshot (cycle skipped)"])
        champion = "none" if self.champion_metric is None else f"{self.champion_metric:.3f}"
        verdict = "PROMOTED to champion" if self.promoted else f"kept champion v{self.champion_version}"
        lines = [
            head,
            f"  train    {self.train_method}, {self.train_steps} steps on {self.dataset_uri}",
            f"  evaluate {self.metric} on {self.eval_split}: candidate {self.candidate_metric:.3f}, champion {champion}",
            f"  promote  version {self.version} ({self.model_uri}): {verdict} — {self.decision}",
            f"  cost     {self.seconds:.0f} s, {self.cpu_seconds:.0f} CPU-s, ${self.cost_usd:.4f}; gain {self.gain:+.3f}"
            + (f" ({self.gain_per_dollar:+.1f} per $)" if self.gain_per_dollar is not None else ""),
        ]
        lines += [f"  {name:8s} {url}" for name, url in self.urls.items()]
        return "\n".join(lines)


def costs(cfg: Config, start: CycleStart) -> dict:
    seconds = time.time() - start.started_at
    cpu = max(0.0, cpu_seconds() - start.cpu_seconds_at_start)
    return {"seconds": seconds, "cpu_seconds": cpu, "cost_usd": cpu / 3600 * cfg.cost.usd_per_cpu_hour}


def build_report(cfg: Config, start: CycleStart, data, warnings, dataset, candidate, evaluation, promotion,
                 urls: dict[str, str]) -> CycleReport:
    spent = costs(cfg, start)
    champion_metric = evaluation.champion.metric if evaluation.champion else 0.0
    gain = evaluation.candidate.metric - champion_metric if promotion.decision.promote else 0.0
    return CycleReport(
        run_id=start.run_id, status="completed", snapshot_ids=data.snapshot_ids,
        records_ingested=data.records_ingested, quarantined=data.quarantined, validation_warnings=warnings,
        dataset_uri=dataset.uri, train_method=candidate.method, train_steps=candidate.steps,
        eval_split=evaluation.split, candidate_metric=evaluation.candidate.metric,
        champion_metric=evaluation.champion.metric if evaluation.champion else None, metric=cfg.promote.metric,
        version=promotion.version, model_uri=promotion.model_uri, promoted=promotion.decision.promote,
        decision=promotion.decision.reason, champion_version=promotion.champion_version, gain=gain,
        gain_per_dollar=(gain / spent["cost_usd"]) if spent["cost_usd"] > 0 else None, urls=urls, **spent)
