"""The contract has one source of truth: the JSON Schema file, the per-line checker, the Parquet schema and the GX
suite must all say what `postgame.contract.spec` says."""

from __future__ import annotations

import copy
import json
import re

import jsonschema
import pytest

from postgame.contract import arrow, json_schema, spec
from postgame.contract.check import ContractViolation, check_record, check_record_flags
from postgame.contract.synthetic import sessions


def test_shipped_schema_file_is_generated_from_the_spec():
    # guards: someone edits the spec (or the file) and forgets the other; fix with `python -m postgame.contract`
    assert json_schema.SCHEMA_FILE.read_text() == json_schema.render()


def test_shipped_gx_suites_are_generated_from_the_spec():
    pytest.importorskip("great_expectations")
    from postgame.contract import gx

    assert gx.SUITES_FILE.read_text() == gx.render()


def test_schema_file_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(json.loads(json_schema.SCHEMA_FILE.read_text()))


def _mutations(record: dict) -> list[tuple[str, dict]]:
    """Every way of breaking (or almost breaking) each field, derived from the spec."""
    out = []
    for path, field in spec.leaves():
        parts = path.split(".")

        def put(value, delete=False, parts=parts):
            r = copy.deepcopy(record)
            node = r
            for part in parts[:-1]:
                node = node[part]
            if delete:
                node.pop(parts[-1], None)
            else:
                node[parts[-1]] = value
            return r

        out += [
            (f"{path} missing", put(None, delete=True)),
            (f"{path} null", put(None)),
            (f"{path} bool", put(True)),
            (f"{path} list", put([])),
            (f"{path} object", put({})),
            (f"{path} string", put("7")),
            (f"{path} int", put(7)),
            (f"{path} float", put(7.5)),
            (f"{path} integral float", put(7.0)),
            (f"{path} negative", put(-1)),
            (f"{path} huge", put(1e300)),
            (f"{path} above int64", put(2**63)),
            (f"{path} empty", put("")),
        ]
        if field.enum:
            out.append((f"{path} unknown enum", put("not-a-value")))
            out += [(f"{path} = {v}", put(v)) for v in field.enum]
    ts = [
        ("2026-11-29T14:03:11Z", True),
        ("2026-11-29t14:03:11z", True),
        ("2026-11-29T14:03:11.123456789+05:30", True),
        ("2026-11-29T14:03:11", False),
        ("2026-11-29 14:03:11Z", False),
        ("2026-02-30T00:00:00Z", False),
        ("2024-02-29T00:00:00Z", True),
        ("2026-13-01T00:00:00Z", False),
        ("0000-01-01T00:00:00Z", False),
        ("2026-11-29T24:00:00Z", False),
        ("2026-11-29T14:03:11+24:00", False),
        ("yesterday", False),
        ("2026-11-29T14:03:11Z ", False),
        ("２０２６-11-29T14:03:11Z", False),
    ]
    out += [(f"timestamp {t!r}", {**record, "timestamp": t}) for t, _ in ts]
    msgs = record["messages"]
    out += [
        ("message role unknown", {**record, "messages": [{**msgs[0], "role": "robot"}]}),
        ("message without content", {**record, "messages": [{"role": "user"}]}),
        ("message name null", {**record, "messages": [{**msgs[0], "name": None}]}),
        ("message name int", {**record, "messages": [{**msgs[0], "name": 3}]}),
        ("message null", {**record, "messages": [None]}),
        ("messages empty", {**record, "messages": []}),
        ("message is a string", {**record, "messages": ["hi"]}),
        ("schema_version 2", {**record, "schema_version": 2}),
        ("unknown fields kept", {**record, "x": 1, "agent": {**record["agent"], "region": "eu"}}),
    ]
    return out


def test_checker_agrees_with_the_json_schema_on_every_mutation():
    # guards: the fast checker accepting a line the published contract rejects (or the reverse)
    validator = jsonschema.Draft202012Validator(
        json_schema.json_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    base = next(sessions(1, seed=5))
    cases = [("valid", base)] + [(f"valid #{i}", r) for i, r in enumerate(sessions(20, seed=6))] + _mutations(base)
    disagreements = []
    for name, record in cases:
        schema_ok = validator.is_valid(record)
        try:
            check_record(copy.deepcopy(record))
            checker_ok = True
        except ContractViolation:
            checker_ok = False
        if schema_ok != checker_ok:
            disagreements.append(f"{name}: schema {schema_ok}, checker {checker_ok}")
    assert not disagreements
    assert len(cases) > 300


def test_checker_names_the_field_and_converts_integral_floats():
    record = next(sessions(1, seed=1))
    record["usage"]["prompt_tokens"] = 12.0
    assert check_record(record) is False  # no unknown fields
    assert type(record["usage"]["prompt_tokens"]) is int
    assert check_record(dict(record, agent=dict(record["agent"], region="eu"))) is True
    record["messages"][2]["role"] = "robot"
    with pytest.raises(ContractViolation) as err:
        check_record(record)
    assert err.value.path == "messages[2].role"


def test_a_number_field_takes_a_large_integer_only_when_float64_holds_it_exactly():
    record = next(sessions(1, seed=1))
    record["usage"]["latency_ms"] = 2**60  # a float64 exactly: stored as that float
    assert check_record_flags(record) == (False, True) and record["usage"]["latency_ms"] == 2.0**60
    assert arrow.records_to_table([record]).column("usage").to_pylist()[0]["latency_ms"] == 2.0**60
    record["usage"]["latency_ms"] = 2**53 + 1  # no float64 equals it: rounding would change the value
    with pytest.raises(ContractViolation, match="no exact float64") as err:
        check_record(record)
    assert err.value.path == "usage.latency_ms"  # before: checked, then refused by the row builder (ArrowInvalid)


def test_checker_never_quotes_a_long_value():
    # guards: a long secret quoted in a quarantine detail, cut before the redaction could recognise it
    record = next(sessions(1, seed=1))
    record["outcome"]["status"] = "x" * 30 + "AKIAIOSFODNN7EXAMPLE"
    with pytest.raises(ContractViolation) as err:
        check_record(record)
    assert "AKIA" not in str(err.value)


def test_parquet_schema_and_row_round_trip():
    names = [f.name for f in spec.AGENT_SESSION.fields]
    assert arrow.arrow_schema().names == names + [arrow.EXTRA, arrow.SOURCE_KEY, arrow.SOURCE_LINE]
    import pyarrow as pa

    record = next(sessions(1, seed=2))
    record["trace"] = {"id": "t-1"}
    record["agent"]["region"] = "eu"
    record["messages"][1]["tool_call_id"] = "c1"
    expected = copy.deepcopy(record)
    check_record(record)
    row = dict(record, extra=json.dumps(arrow.unknown_fields(record)), _source_key="k", _source_line=1)
    back = pa.Table.from_pylist([row], schema=arrow.arrow_schema()).to_pylist()[0]
    assert arrow.to_record(back) == expected


def _message_leaves(version: int) -> list:
    messages = next(f for f in spec.SPECS[version].fields if f.kind == "array")
    return [(p, f) for p, f in spec.leaves(messages.items) if f.kind != "array"]


def test_gx_suite_has_an_expectation_for_every_rule_of_the_spec():
    pytest.importorskip("great_expectations")
    from dataclasses import replace

    from postgame.contract.gx import DTYPES, MESSAGES, SESSIONS, TOOL_CALLS, contract_expectations

    tables = contract_expectations()
    assert set(tables) == {SESSIONS, MESSAGES, TOOL_CALLS}
    have = {
        (table, e.expectation_type, getattr(e, "column", None), (e.meta or {}).get("where")): e
        for table, exps in tables.items()
        for e in exps
    }
    sessions_fields = [
        (p, replace(f, enum=spec.SCHEMA_VERSIONS) if p == "schema_version" else f)
        for p, f in spec.leaves()
        if f.kind != "array"
    ]
    alike = {p for p, f in _message_leaves(1) if (p, f) in _message_leaves(2)}  # same field in both versions
    cases = [(SESSIONS, p, f, None) for p, f in sessions_fields]
    cases += [
        (MESSAGES, p, f, None if p in alike else f"schema_version == {v}")
        for v in spec.SCHEMA_VERSIONS
        for p, f in _message_leaves(v)
    ]
    cases += [(TOOL_CALLS, p, f, None) for p, f in spec.leaves(spec.TOOL_CALL)]
    assert alike == {"role", "name"}
    for table, path, field, where in cases:
        assert (table, "expect_column_to_exist", path, None) in have
        key = (table, "expect_column_values_to_be_in_type_list", path, where)
        assert have[key].type_list == [DTYPES[field.kind]]
        assert ((table, "expect_column_values_to_not_be_null", path, where) in have) == (not field.nullable)
        if field.enum:
            assert have[(table, "expect_column_values_to_be_in_set", path, where)].value_set == list(field.enum)
        if field.minimum is not None:
            assert have[(table, "expect_column_values_to_be_between", path, where)].min_value == field.minimum
        if field.pattern:
            assert have[(table, "expect_column_values_to_match_regex", path, where)].regex == field.pattern
        if field.min_length:
            assert have[(table, "expect_column_value_lengths_to_be_between", path, where)].min_value == field.min_length
        assert ((table, "expect_column_values_to_be_unique", path, where) in have) == field.unique
    for name, roles in spec.NON_NULL_FOR.items():
        assert (
            MESSAGES,
            "expect_column_values_to_not_be_null",
            name,
            f"schema_version == 2 and role in {list(roles)!r}",
        ) in have
    assert (
        MESSAGES,
        "expect_column_values_to_be_null",
        "tool_call_id",
        "schema_version == 2 and role not in ['tool']",
    ) in have
    assert (TOOL_CALLS, "expect_column_values_to_be_in_set", "role", None) in have  # tool_calls only on assistant
    assert all(e.severity == "critical" for exps in tables.values() for e in exps)


def test_fast_yes_no_check_says_yes_only_where_the_exact_check_passes_unchanged():
    # guards: ingest's fast path storing a record the exact check would reject, convert, or split into `extra`
    from postgame.contract.check import check_record_flags
    from postgame.contract.fastcheck import is_plain_valid

    base = next(sessions(1, seed=5))
    cases = [("valid", base)] + [(f"valid #{i}", r) for i, r in enumerate(sessions(20, seed=6))] + _mutations(base)
    wrong, plain = [], 0
    for name, record in cases:
        try:
            exact = check_record_flags(copy.deepcopy(record)) == (False, False)
        except ContractViolation:
            exact = False
        fast = is_plain_valid(copy.deepcopy(record))
        plain += fast
        if fast and not exact:
            wrong.append(name)
    assert not wrong
    assert plain > 30  # it does say yes: the valid records and the harmless mutations


def test_arrow_column_check_passes_only_rows_the_exact_check_passes_unchanged():
    # guards: ingest's bulk path storing a row the exact check would reject, convert or split into `extra`, or one
    # whose Arrow values differ from what the exact path stores
    import pyarrow as pa

    from postgame.contract.arrowcheck import has_key, read_lines_strict, suspect_rows
    from postgame.contract.check import check_record_flags

    base = next(sessions(1, seed=5))
    cases = [("valid", base)] + [(f"valid #{i}", r) for i, r in enumerate(sessions(20, seed=6))] + _mutations(base)
    no_env = copy.deepcopy(base)
    del no_env["task"]["environment"]
    no_env["task"]["problem_statement"] = 'a quoted key: {"environment": null}'
    cases += [
        ("environment absent, quoted in a string", no_env),
        ("environment null", {**base, "task": {**base["task"], "environment": None}}),
    ]
    wrong, accepted = [], 0
    for name, record in cases:
        try:
            exact = check_record_flags(copy.deepcopy(record)) == (False, False)
        except ContractViolation:
            exact = False
        line = json.dumps(record).encode()
        if re.search(rb"[0-9]{16}", line):
            continue  # ingest's pre-filter keeps these from the bulk path (an integer beyond 2**53 in a float column)
        try:
            table = read_lines_strict(line + b"\n" + line)  # two rows: the check works on columns
        except pa.ArrowException:
            continue  # Arrow refused it: the line goes to the per-line paths
        verdict = suspect_rows(table)
        suspect = bool(verdict.suspect[0])
        for key, nulls in verdict.null_if_present.items():
            suspect |= bool(nulls[0]) and not has_key(line, key)
        if suspect:
            continue
        accepted += 1
        stored = arrow.records_to_table([copy.deepcopy(record)]).select(table.column_names).to_pylist()[0]
        if not exact or table.slice(0, 1).to_pylist()[0] != stored:
            wrong.append(name)
    assert not wrong
    assert accepted > 30  # it does accept: the valid records and the harmless mutations
