"""The contract as Great Expectations 1.x expectations, generated from `spec.AGENT_SESSION`.

Three tables are checked: `sessions` (one row per record, nested objects flattened to dotted columns such as
`outcome.status`), `messages` (one row per message, with its `session_id`, `schema_version` and `position`) and
`tool_calls` (one row per tool call of a version 2 message). Column dtypes are those of `postgame.validate.frames`:
strings as pandas `StringDtype`, integers as int64, numbers as float64.

A field the two versions define alike has its expectations on every row; one they define apart (a message's
`content`: null allowed in version 2) has each version's on that version's rows (`row_condition`). The role rules
of version 2 messages (`spec.NON_NULL_FOR`, `spec.ONLY_FOR`) and the trajectory rules (`postgame.contract.trajectory`)
hold on version 2 rows, the latter on the columns `postgame.validate.frames` derives (`follows`, `answers`).

Every contract expectation is critical: a snapshot that breaks the contract must not reach training.
Great Expectations is imported inside the functions (the import costs seconds).

The suites are shipped as `agent_session.gx_suites.json` beside this module (a test fails when it differs from what
the spec gives); regenerate with `python -m postgame.contract`.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from postgame.contract.spec import (
    AGENT_SESSION,
    NON_NULL_FOR,
    ONLY_FOR,
    SCHEMA_VERSIONS,
    SPECS,
    TOOL_CALL,
    Field,
    leaves,
)
from postgame.contract.trajectory import FIRST_ROLES

SUITES_FILE = Path(__file__).with_name("agent_session.gx_suites.json")

SESSIONS = "sessions"
MESSAGES = "messages"
TOOL_CALLS = "tool_calls"
Part = tuple[str, str, object]  # (column, "==" | "in" | "not in", value): one term of a row condition
V2: Part = ("schema_version", "==", 2)
DTYPES = {"string": "StringDtype", "integer": "int64", "number": "float64"}


def import_gx():
    """great_expectations, imported on first use, with its usage telemetry off (a data gate phones nobody)."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations

    return great_expectations


def _where(*parts: Part) -> tuple[dict, str]:
    """A GX row condition (its terms and-ed) as expectation keywords, and as text for the description."""
    from great_expectations.expectations.row_conditions import Column, Condition

    terms: list[Condition] = []
    for column, op, value in parts:
        c = Column(column)
        if op == "==":
            terms.append(c == value)
        elif isinstance(value, list):
            terms.append(c.is_in(value) if op == "in" else c.is_not_in(value))
        else:
            raise TypeError(f"row condition {column} {op} {value!r}: the values of 'in' / 'not in' are a list")
    condition = terms[0]
    for term in terms[1:]:
        condition = condition & term
    return {"row_condition": condition}, " and ".join(f"{column} {op} {value!r}" for column, op, value in parts)


def _described(exp, column: str, what: str, where: str | None = None):
    exp.description = f"{column}: {what}" + (f" (where {where})" if where else "")
    exp.meta = {"contract_field": column, **({"where": where} if where else {})}  # `where` names the result too
    return exp


def _column_expectations(column: str, field: Field, condition: Part | None = None) -> list:
    """The expectations of one field; with `condition`, on the rows it selects (the column's existence is then
    left to the caller)."""
    gxe = import_gx().expectations
    where, text = _where(condition) if condition else ({}, None)

    def described(exp, what: str):
        return _described(exp, column, what, text)

    out = [] if condition else [described(gxe.ExpectColumnToExist(column=column), "column exists")]
    if not field.nullable:
        out.append(described(gxe.ExpectColumnValuesToNotBeNull(column=column, **where), "required, never null"))
    out.append(
        described(
            gxe.ExpectColumnValuesToBeInTypeList(column=column, type_list=[DTYPES[field.kind]], **where),
            f"of type {field.kind}",
        )
    )
    if field.enum:
        out.append(
            described(
                gxe.ExpectColumnValuesToBeInSet(column=column, value_set=list(field.enum), **where),
                f"one of {', '.join(map(str, field.enum))}",
            )
        )
    if field.minimum is not None:
        out.append(
            described(
                gxe.ExpectColumnValuesToBeBetween(column=column, min_value=field.minimum, **where),
                f">= {field.minimum}",
            )
        )
    if field.min_length:
        out.append(
            described(
                gxe.ExpectColumnValueLengthsToBeBetween(column=column, min_value=field.min_length, **where),
                f"at least {field.min_length} character(s)",
            )
        )
    if field.pattern:
        out.append(
            described(
                gxe.ExpectColumnValuesToMatchRegex(column=column, regex=field.pattern, **where),
                "RFC 3339 date-time with a time zone",
            )
        )
    if field.unique:
        out.append(described(gxe.ExpectColumnValuesToBeUnique(column=column), "unique"))
    return out


def _versioned(per_version: dict[int, list[tuple[str, Field]]]) -> list:
    """Expectations of a table's fields over both versions: alike -> on every row; apart -> per version."""
    columns: dict[str, dict[int, Field]] = {}
    for version, fields in per_version.items():
        for path, field in fields:
            columns.setdefault(path, {})[version] = field
    gxe = import_gx().expectations
    out = []
    for path, by_version in columns.items():
        same = list(by_version.values())
        if len(by_version) == len(per_version) and all(f == same[0] for f in same):
            out += _column_expectations(path, same[0])
            continue
        out.append(_described(gxe.ExpectColumnToExist(column=path), path, "column exists"))
        for version, field in by_version.items():
            out += _column_expectations(path, field, ("schema_version", "==", version))
    return out


def _rule(kind, column: str, what: str, *where: Part, **kw):
    """One expectation of a role or trajectory rule, on the rows `where` selects (every row without)."""
    condition, text = _where(*where) if where else ({}, None)
    return _described(kind(column=column, **condition, **kw), column, what, text)


def _role_rules() -> list:
    """Version 2 messages: the fields a role must carry, and those only some roles may carry."""
    gxe = import_gx().expectations
    out = [
        _rule(
            gxe.ExpectColumnValuesToNotBeNull,
            name,
            f"required on {', '.join(roles)} messages",
            V2,
            ("role", "in", list(roles)),
        )
        for name, roles in NON_NULL_FOR.items()
    ]
    out += [
        _rule(
            gxe.ExpectColumnValuesToBeNull,
            name,
            f"only on {', '.join(roles)} messages",
            V2,
            ("role", "not in", list(roles)),
        )
        for name, roles in ONLY_FOR.items()
        if name != TOOL_CALLS
    ]  # tool_calls: its own table holds `role`
    return out


def _trajectory_expectations() -> dict[str, list]:
    """The rules of `postgame.contract.trajectory` on the derived columns of `postgame.validate.frames`."""
    gxe = import_gx().expectations
    tool: Part = ("role", "==", "tool")
    messages = [
        _rule(
            gxe.ExpectColumnValuesToBeInSet,
            "role",
            "a session starts with a system or a user message",
            V2,
            ("position", "==", 0),
            value_set=list(FIRST_ROLES),
        ),
        _rule(
            gxe.ExpectColumnValuesToNotBeNull,
            "answers",
            "a tool message answers a call made earlier in its session",
            V2,
            tool,
        ),
        _rule(
            gxe.ExpectColumnValuesToBeInSet,
            "follows",
            "a tool message comes right after an assistant message with tool calls or a tool message",
            V2,
            tool,
            value_set=["assistant+tool_calls", "tool"],
        ),
        _rule(
            gxe.ExpectColumnValuesToBeInSet,
            "answers",
            "a tool message answers a call of the assistant message its run of tool messages follows",
            V2,
            tool,
            value_set=["run"],
        ),
    ]
    tool_calls = [  # every row is a call of a version 2 message (version 1 messages have no tool_calls column)
        _rule(
            gxe.ExpectColumnValuesToBeInSet,
            "role",
            "only an assistant message calls tools",
            value_set=list(ONLY_FOR[TOOL_CALLS]),
        ),
        _rule(
            gxe.ExpectColumnValuesToBeBetween,
            "answers",
            "every call is answered once, by the tool messages right after its message",
            ("last_message", "==", False),
            min_value=1,
            max_value=1,
        ),
        _described(
            gxe.ExpectCompoundColumnsToBeUnique(column_list=["session_id", "position", "id"]),
            "id",
            "the calls of one message have distinct ids",
        ),
    ]
    return {MESSAGES: messages, TOOL_CALLS: tool_calls}


def contract_expectations() -> dict[str, list]:
    """{table name: [Expectation, ...]}: `sessions`, `messages`, `tool_calls` (see the module docstring)."""
    session_fields = [
        (path, replace(field, enum=SCHEMA_VERSIONS) if path == "schema_version" else field)
        for path, field in leaves(AGENT_SESSION)
        if field.kind != "array"
    ]
    messages = {
        version: [(p, f) for p, f in leaves(spec.fields[_MESSAGES_AT].element) if f.kind != "array"]
        for version, spec in SPECS.items()
    }
    trajectory = _trajectory_expectations()
    return {
        SESSIONS: [exp for path, field in session_fields for exp in _column_expectations(path, field)],
        MESSAGES: _versioned(messages) + _role_rules() + trajectory[MESSAGES],
        TOOL_CALLS: [exp for path, field in leaves(TOOL_CALL) for exp in _column_expectations(path, field)]
        + trajectory[TOOL_CALLS],
    }


_MESSAGES_AT = [f.name for f in AGENT_SESSION.fields].index(MESSAGES)


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
