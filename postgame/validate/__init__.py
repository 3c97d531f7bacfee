"""Data validation of ingested snapshots with Great Expectations 1.x: the gate before training.

    validate_snapshot(snapshot_id, cfg=cfg) -> ValidationReport   (raises DataValidationError on critical failures)
    run_validation(snapshot_id, cfg=cfg) -> ValidationReport      (never raises on bad data)
    raise_on_critical(report) -> ValidationReport                 (the gate alone, after logging the report)
    report_markdown(report) -> str                                (the Prefect artifact)

Names are resolved on first use: `postgame.config` imports `postgame.settings.validate`, and loading the config must
not import pandas or Great Expectations.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "validate_snapshot": "postgame.validate.run",
    "run_validation": "postgame.validate.run",
    "raise_on_critical": "postgame.validate.run",
    "ValidationReport": "postgame.validate.report",
    "report_markdown": "postgame.validate.report",
    "CheckResult": "postgame.validate.suites",
    "BatchMetrics": "postgame.validate.metrics",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'postgame.validate' has no attribute {name!r}")
