"""The contract as Great Expectations 1.x expectations, generated from `spec.AGENT_SESSION`.

Two tables are checked: `sessions` (one row per record, nested objects flattened to dotted columns such as
`outcome.status`) and, for each list of objects, a table named after it: `messages` (one row per message, with its
`session_id`). Column dtypes are those of
`postgame.validate.frames`: strings as pandas `StringDtype`, integers as int64, numbers as float64.

Every contract expectation is critical: a snapshot that breaks the contract must not reach training.
Great Expectations is imported inside the functions (the import costs seconds).

The suites are shipped as `agent_session.gx_suites.json` beside this module (a test fails when it differs from what
the spec gives); regenerate with `python -m postgame.contract`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from postgame.contract.spec import AGENT_SESSION, Field, leaves

SUITES_FILE = Path(__file__).with_name("agent_session.gx_suites.json")

SESSIONS = "sessions"
MESSAGES = "messages"
DTYPES = {"string": "StringDtype", "integer": "int64", "number": "float64"}


def import_gx():
    """great_expectations, imported on first use, with its usage telemetry off (a data gate phones nobody)."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations

    return great_expectations


def _column_expectations(column: str, field: Field) -> list:
    gxe = import_gx().expectations

    def described(exp, what: str):
        exp.description = f"{column}: {what}"
        exp.meta = {"contract_field": column}
        return exp

    out = [described(gxe.ExpectColumnToExist(column=column), "column exists")]
    if not field.nullable:
        out.append(described(gxe.ExpectColumnValuesToNotBeNull(column=column), "required, never null"))
    out.append(described(gxe.ExpectColumnValuesToBeInTypeList(column=column, type_list=[DTYPES[field.kind]]),
                         f"of type {field.kind}"))
    if field.enum:
        out.append(described(gxe.ExpectColumnValuesToBeInSet(column=column, value_set=list(field.enum)),
                             f"one of {', '.join(map(str, field.enum))}"))
    if field.minimum is not None:
        out.append(described(gxe.ExpectColumnValuesToBeBetween(column=column, min_value=field.minimum),
                             f">= {field.minimum}"))
    if field.min_length:
        out.append(described(gxe.ExpectColumnValueLengthsToBeBetween(column=column, min_value=field.min_length),
                             f"at least {field.min_length} character(s)"))
    if field.pattern:
        out.append(described(gxe.ExpectColumnValuesToMatchRegex(column=column, regex=field.pattern),
                             "RFC 3339 date-time with a time zone"))
    if field.unique:
        out.append(described(gxe.ExpectColumnValuesToBeUnique(column=column), "unique"))
    return out


def contract_expectations() -> dict[str, list]:
    """{table name: [Expectation, ...]}: `sessions`, then one table per list of objects (`messages`)."""
    tables: dict[str, list] = {SESSIONS: []}
    for path, field in leaves(AGENT_SESSION):
        if field.kind == "array":  # one table per list of objects, named after it
            tables[path] = [exp for sub_path, sub in leaves(field.items) for exp in _column_expectations(sub_path, sub)]
        else:
            tables[SESSIONS].extend(_column_expectations(path, field))
    return tables


def render() -> str:
    """The suites as Great Expectations suite JSON (one per table), as shipped."""
    gx = import_gx()
    suites = []
    for table, expectations in contract_expectations().items():
        suite = gx.ExpectationSuite(name=f"{AGENT_SESSION.name}.{table}", expectations=expectations).to_json_dict()
        suite.pop("id", None)  # assigned when a GX project stores it
        suites.append(suite)
    return json.dumps(suites, indent=2) + "\n"


def write(path: Path = SUITES_FILE) -> Path:
    path.write_text(render())
    return path
