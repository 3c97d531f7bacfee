"""Running expectation suites with Great Expectations 1.x and writing Data Docs.

One file-backed GX project under `<home>/<validate.docs_dir>/gx`: a pandas data source with one asset per suite, a
suite and a validation definition per table (`agent_session.sessions`, `agent_session.messages`,
`agent_session.batch`, and `agent_session.sessions__whole` for expectations that need a whole column at once:
uniqueness). The snapshot is validated batch by batch (a few Parquet row groups each): every expectation runs on
every record, one batch in memory at a time, and its results are merged over the batches (a failure in any batch
fails it; unexpected counts add up). Then the Data Docs of the run are built once (a page per batch and table).
Results of every run are kept, so the Data Docs index lists every snapshot validated from this home. Results use the
SUMMARY format: the COMPLETE format with `unexpected_index_column_names` renders incomplete Data Docs
(great_expectations#11933), and the snapshot's rows are already traceable by session_id.

Great Expectations is imported here, inside the function: the import costs seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd
from pydantic import BaseModel

from postgame.contract.gx import import_gx
from postgame.validate.metrics import BatchCheck

SUITE_PREFIX = "agent_session"
DATASOURCE = "postgame_snapshots"


class CheckResult(BaseModel):
    name: str  # `<table>.<expectation type>(<column>)[ where <row condition>]`: how a failure is named
    table: str
    expectation: str
    column: str | None
    severity: str
    success: bool
    description: str
    observed: str | None = None
    unexpected_count: int | None = None
    examples: list[str] = []


class SuiteRun(BaseModel):
    results: list[CheckResult]
    docs_index: str  # path of the Data Docs site's index.html
    docs_pages: list[str]  # file:// URLs of this run's pages


def batch_expectations(checks: list[BatchCheck]) -> list:
    """The batch checks as expectations on a one-row frame of metrics (so they show in Data Docs too)."""
    gxe = import_gx().expectations
    out = []
    for check in checks:
        exp = gxe.ExpectColumnValuesToBeBetween(
            column=check.metric, min_value=check.min_value, max_value=check.max_value, severity=check.severity
        )
        exp.description = f"{check.name}: {check.description}"
        exp.meta = {"check": check.name, "previous": check.previous}
        out.append(exp)
    return out


def batch_frame(checks: list[BatchCheck]) -> pd.DataFrame:
    return pd.DataFrame([{check.metric: check.value for check in checks}], dtype="float64")


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _result(table: str, er) -> CheckResult:
    config = er.expectation_config
    column = config.kwargs.get("column")
    result = er.result or {}
    failed_with = (
        (er.exception_info or {}).get("exception_message")
        if (er.exception_info or {}).get("raised_exception")
        else None
    )
    observed = result.get("observed_value")
    examples = [_short(v) for v in (result.get("partial_unexpected_list") or [])[:5]]
    where = (config.meta or {}).get("where")  # a rule on some rows: the same expectation may hold on others
    name = f"{table}.{config.type}({column})" if column else f"{table}.{config.type}"
    return CheckResult(
        name=f"{name} where {where}" if where else name,
        table=table,
        expectation=config.type,
        column=column,
        severity=str(getattr(config.severity, "value", config.severity)),
        success=bool(er.success),
        description=config.description or "",
        observed=_short(failed_with or observed) if (failed_with or observed is not None) else None,
        unexpected_count=result.get("unexpected_count"),
        examples=examples,
    )


def _replace(factory, name: str) -> None:
    """Drop a stored suite or validation definition: `add_or_update` compares expectation lists pairwise (slow)."""
    try:
        factory.delete(name)
    except Exception:  # noqa: BLE001 - GX raises its own not-found errors; absent is what we want
        pass


def _merge(into: CheckResult | None, new: CheckResult) -> CheckResult:
    """One expectation over many batches: fails if any batch fails; counts add up; examples from failing batches."""
    if into is None:
        return new
    failed = into if not into.success else new if not new.success else None
    counts = [c for c in (into.unexpected_count, new.unexpected_count) if c is not None]
    return into.model_copy(
        update={
            "success": into.success and new.success,
            "observed": (failed or new).observed,
            "unexpected_count": sum(counts) if counts else None,
            "examples": (into.examples + [e for e in new.examples if e not in into.examples])[:5],
        }
    )


def table_of(suite: str) -> str:
    """`sessions__whole` -> `sessions`: a suite key names its table, and after `__` how it is fed."""
    return suite.split("__")[0]


def run_suites(
    batches: Iterable[dict[str, pd.DataFrame]],
    suites: dict[str, list],
    *,
    project_dir: Path,
    run_name: str,
    progress: Callable[[str, int], None] | None = None,
) -> SuiteRun:
    """Validate the frames of each batch against their suites (a suite absent from a batch is not run for it), then
    build the Data Docs of this run once. A result per expectation, merged over the batches: memory holds one batch.
    Suite keys are table names, optionally with a `__suffix` (`sessions__whole`); results are named by the table.
    `progress(text, 1)` is told as each batch is validated, `(text, 0)` as the Data Docs are built."""
    tell = progress or (lambda text, done: None)
    gx = import_gx()
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.data_context.types.base import ProgressBarsConfig

    project_dir.mkdir(parents=True, exist_ok=True)
    context = gx.get_context(mode="file", project_root_dir=project_dir)
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    source = context.data_sources.add_or_update_pandas(DATASOURCE)
    definitions = {}
    for key, expectations in suites.items():
        name = f"{SUITE_PREFIX}.{key}"
        batch = source.add_dataframe_asset(key).add_batch_definition_whole_dataframe("whole")
        _replace(context.validation_definitions, name)
        _replace(context.suites, name)
        suite = context.suites.add(gx.ExpectationSuite(name=name, expectations=expectations))
        definitions[key] = context.validation_definitions.add(
            gx.ValidationDefinition(name=name, data=batch, suite=suite)
        )
    merged: dict[tuple[str, int], CheckResult] = {}
    run_ids = []
    for number, frames in enumerate(batches):
        run_id = RunIdentifier(run_name=f"{run_name}-part{number:04d}")
        run_ids.append(run_id)
        for key, definition in definitions.items():
            if key not in frames:
                continue
            outcome = definition.run(
                batch_parameters={"dataframe": frames[key]}, run_id=run_id, result_format={"result_format": "SUMMARY"}
            )
            for i, er in enumerate(outcome.results):
                merged[(key, i)] = _merge(merged.get((key, i)), _result(table_of(key), er))
        tell(f"batch {number + 1} validated", 1)
    tell("building the Data Docs", 0)
    wanted = {(r.run_name, r.run_time) for r in run_ids}
    ours = [
        key
        for key in context.validation_results_store.list_keys()
        if (key.run_id.run_name, key.run_id.run_time) in wanted
    ]
    context.build_data_docs(resource_identifiers=ours)
    pages = [
        site["site_url"]
        for key in ours
        for site in context.get_docs_sites_urls(resource_identifier=key)
        if site.get("site_url")
    ]
    index = project_dir / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html"
    results = [merged[(key, i)] for key in suites for i in range(len(suites[key])) if (key, i) in merged]
    return SuiteRun(results=results, docs_index=str(index), docs_pages=pages)
