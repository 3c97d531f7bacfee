"""The typed result of validating one snapshot, and its markdown summary (the Prefect artifact)."""

from __future__ import annotations

from pydantic import BaseModel

from postgame.validate.metrics import BatchMetrics
from postgame.validate.suites import CheckResult


class ValidationReport(BaseModel):
    snapshot_id: str
    previous_snapshot_id: str | None
    drift_note: str  # which snapshot drift was measured against, or why it was not
    passed: bool  # no critical failure
    critical_failures: list[CheckResult]
    warnings: list[CheckResult]
    results: list[CheckResult]
    metrics: BatchMetrics
    previous_metrics: BatchMetrics | None
    docs_path: str  # Data Docs index.html
    docs_pages: list[str]  # this run's Data Docs pages (file:// URLs)
    report_path: str  # this report as JSON
    validated_at: str

    @property
    def failed_names(self) -> list[str]:
        return [r.name for r in self.critical_failures]


def _row(r: CheckResult) -> str:
    observed = (
        r.observed if r.observed is not None else (f"{r.unexpected_count} unexpected" if r.unexpected_count else "")
    )
    if r.examples:
        observed += f" e.g. {', '.join(r.examples[:3])}"
    status = "pass" if r.success else ("**FAIL**" if r.severity == "critical" else "warn")
    text = f"| {status} | {r.severity} | `{r.name}` | {r.description} | {observed} |"
    return text.replace("\n", " ")


def report_markdown(report: ValidationReport) -> str:
    """A short markdown summary: verdict, failures and warnings first, the batch metrics, where the Data Docs are."""
    verdict = "PASSED" if report.passed else f"FAILED ({len(report.critical_failures)} critical)"
    lines = [
        f"## Data validation of snapshot `{report.snapshot_id[:12]}`: {verdict}",
        "",
        f"{len(report.results)} expectations, {len(report.critical_failures)} critical failure(s), "
        f"{len(report.warnings)} warning(s). Drift: {report.drift_note}.",
        "",
    ]
    shown = report.critical_failures + report.warnings
    if shown:
        lines += ["| status | severity | expectation | what it guards | observed |", "|---|---|---|---|---|"]
        lines += [_row(r) for r in shown]
        lines.append("")
    m, p = report.metrics, report.previous_metrics
    lines += ["| metric | this snapshot | previous |", "|---|---|---|"]

    def fmt(v) -> str:
        return "" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)

    for field in BatchMetrics.model_fields:
        now, before = getattr(m, field), getattr(p, field) if p else None
        lines.append(f"| {field} | {fmt(now)} | {fmt(before)} |")
    lines += ["", f"Data Docs: [{report.docs_path}](file://{report.docs_path})", f"Report: `{report.report_path}`"]
    return "\n".join(lines) + "\n"
