"""Schema v2 (OpenAI chat-completions messages): the checker, the JSON Schema, the trajectory rules and the Parquet
layouts say the same thing, and version 1 is read exactly as before."""

from __future__ import annotations

import copy
import json

import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from postgame.contract import arrow, json_schema
from postgame.contract.check import ContractViolation, check_record, check_record_flags
from postgame.contract.fastcheck import is_plain_valid
from postgame.contract.synthetic import sessions
from postgame.contract.trajectory import malformed_calls, trajectory_problem
from tests.trajectories import agent_session

CALL = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}


def _edit(change) -> dict:
    record = agent_session()
    change(record["messages"])
    return record


def _set(i: int, key: str, value):
    def change(messages):
        messages[i][key] = value

    return change


def _drop(i: int, key: str):
    def change(messages):
        del messages[i][key]

    return change


def _call_edit(key: str, value, sub: str | None = None):
    def change(messages):
        call = messages[2]["tool_calls"][0]
        (call[sub] if sub else call)[key] = value

    return change


# (name, record, valid): every new part of version 2, right and wrong
CASES = [
    ("the agent session", agent_session(), True),
    ("content null on an assistant that calls tools", _edit(_set(5, "content", None)), True),
    ("content null on a final assistant message", _edit(_set(9, "content", None)), True),
    ("tool_calls null on a user message (SDK dumps)", _edit(_set(1, "tool_calls", None)), True),
    ("tool_calls [] on an assistant", _edit(_set(9, "tool_calls", [])), True),
    ("tool_call_id null on an assistant", _edit(_set(2, "tool_call_id", None)), True),
    ("tool message without name", _edit(_drop(3, "name")), True),
    ("content null on a user message", _edit(_set(1, "content", None)), False),
    ("content null on a tool message", _edit(_set(3, "content", None)), False),
    ("content absent on an assistant", _edit(_drop(2, "content")), False),
    ("content a list of parts", _edit(_set(1, "content", [{"type": "text", "text": "hi"}])), False),
    ("tool_calls on a user message", _edit(_set(1, "tool_calls", [CALL])), False),
    ("tool_calls on a tool message", _edit(_set(3, "tool_calls", [CALL])), False),
    ("tool message without tool_call_id", _edit(_drop(3, "tool_call_id")), False),
    ("tool message with tool_call_id null", _edit(_set(3, "tool_call_id", None)), False),
    ("tool_call_id on an assistant message", _edit(_set(9, "tool_call_id", "c1")), False),
    ("tool_call_id an int", _edit(_set(3, "tool_call_id", 7)), False),
    ("tool_calls an object", _edit(_set(2, "tool_calls", CALL)), False),
    ("a tool call null", _edit(_set(2, "tool_calls", [None])), False),
    ("a tool call without id", _edit(lambda m: m[2]["tool_calls"][0].pop("id")), False),
    ("a tool call with an empty id", _edit(_call_edit("id", "")), False),
    ("a tool call of type tool", _edit(_call_edit("type", "tool")), False),
    ("a tool call without function", _edit(lambda m: m[2]["tool_calls"][0].pop("function")), False),
    ("arguments an object, not a JSON text", _edit(_call_edit("arguments", {"command": "ls"}, "function")), False),
    ("arguments missing", _edit(lambda m: m[2]["tool_calls"][0]["function"].pop("arguments")), False),
    ("function name empty", _edit(_call_edit("name", "", "function")), False),
    ("unknown role", _edit(_set(1, "role", "developer")), False),
    ("schema_version 2.0", dict(agent_session(), schema_version=2.0), True),
    ("schema_version 3", dict(agent_session(), schema_version=3), False),
    ("unknown keys in a call", _edit(lambda m: m[2]["tool_calls"][0].update(index=0)), True),
]


def test_checker_and_json_schema_agree_with_the_v2_contract_on_every_case():
    # guards: ingest keeping a v2 record the published schema rejects, or the reverse, and each side being right
    validator = jsonschema.Draft202012Validator(
        json_schema.json_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    wrong = []
    for name, record, valid in CASES:
        try:
            check_record(copy.deepcopy(record))
            checker = True
        except ContractViolation:
            checker = False
        if validator.is_valid(record) != valid or checker != valid:
            wrong.append(f"{name}: expected {valid}, schema {validator.is_valid(record)}, checker {checker}")
    assert not wrong


def test_role_violations_name_the_message_and_the_rule():
    with pytest.raises(ContractViolation) as err:
        check_record(_edit(_set(1, "tool_calls", [CALL])))
    assert err.value.path == "messages[1].tool_calls" and "only an assistant message" in err.value.message
    with pytest.raises(ContractViolation) as err:
        check_record(_edit(_drop(3, "tool_call_id")))
    assert err.value.path == "messages[3].tool_call_id" and "required on a tool message" in err.value.message


def _tool(call_id: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


def _assistant(*ids: str, arguments: str = "{}") -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "bash", "arguments": arguments}} for i in ids
        ],
    }


SYSTEM, USER, REPLY = (
    {"role": "system", "content": "s"},
    {"role": "user", "content": "u"},
    {"role": "assistant", "content": "done"},
)
TRAJECTORIES = [  # (name, messages, reason or None, path)
    ("the agent session", agent_session()["messages"], None, None),
    ("no messages", [], None, None),
    ("starts with the user", [USER, _assistant("a"), _tool("a"), REPLY], None, None),
    ("ends on a call never run (finish)", [SYSTEM, USER, _assistant("a"), _tool("a"), _assistant("f")], None, None),
    ("parallel calls answered out of order", [USER, _assistant("a", "b"), _tool("b"), _tool("a"), REPLY], None, None),
    (
        "the same id reused in a later turn",
        [USER, _assistant("a"), _tool("a"), _assistant("a"), _tool("a"), REPLY],
        None,
        None,
    ),
    (
        "arguments not JSON: the model's mistake, kept",
        [USER, _assistant("a", arguments="{cmd: ls}"), _tool("a")],
        None,
        None,
    ),
    ("arguments NaN: kept", [USER, _assistant("a", arguments="NaN"), _tool("a")], None, None),
    ("arguments empty: kept", [USER, _assistant("a", arguments=""), _tool("a")], None, None),
    (
        "a tool message answering nothing",
        [USER, _assistant("a"), _tool("a"), _tool("zz")],
        "orphan_tool_message",
        "messages[3].tool_call_id",
    ),
    (
        "a tool message before its call",
        [USER, _tool("a"), _assistant("a"), _tool("a")],
        "orphan_tool_message",
        "messages[1].tool_call_id",
    ),
    ("starts with the assistant", [REPLY, USER], "message_order", "messages[0].role"),
    ("starts with a tool message", [_tool("a"), USER], "message_order", "messages[0].role"),
    (
        "a tool message after a user message",
        [USER, _assistant("a"), _tool("a"), USER, _tool("a")],
        "message_order",
        "messages[4]",
    ),
    (
        "answers the call of an earlier turn",
        [USER, _assistant("a"), _tool("a"), _assistant("b"), _tool("a"), _tool("b")],
        "message_order",
        "messages[4].tool_call_id",
    ),
    (
        "a call answered twice",
        [USER, _assistant("a"), _tool("a"), _tool("a")],
        "message_order",
        "messages[3].tool_call_id",
    ),
    (
        "a call left unanswered mid-session",
        [USER, _assistant("a", "b"), _tool("a"), REPLY],
        "message_order",
        "messages[1].tool_calls",
    ),
    (
        "a call left unanswered at the end",
        [USER, _assistant("a", "b"), _tool("a")],
        "message_order",
        "messages[1].tool_calls",
    ),
    (
        "two calls of one message with one id",
        [USER, _assistant("a", "a"), _tool("a")],
        "message_order",
        "messages[1].tool_calls[1].id",
    ),
]


@pytest.mark.parametrize(("name", "messages", "reason", "path"), TRAJECTORIES, ids=[t[0] for t in TRAJECTORIES])
def test_trajectory_rules(name, messages, reason, path):
    # guards: each rule of postgame.contract.trajectory, and the trajectories real agents write that must pass
    problem = trajectory_problem(messages)
    assert (problem.reason, problem.path) == (reason, path) if reason else problem is None, str(problem)


def test_malformed_calls_are_counted_not_problems():
    # guards: a call whose arguments are not JSON (NaN, empty, cut off) is counted, and a trajectory of valid ones is 0
    messages = [USER, _assistant("a", arguments="{cmd: ls}"), _tool("a"), _assistant("b", arguments="NaN"), _tool("b")]
    assert malformed_calls(messages) == 2 and trajectory_problem(messages) is None
    assert malformed_calls([USER, _assistant("a"), _tool("a"), _assistant("c", arguments=""), _tool("c")]) == 1
    assert malformed_calls([USER, _assistant("a", "b"), _tool("a"), _tool("b"), REPLY]) == 0


def test_a_v2_record_never_takes_the_plain_fast_path():
    # guards: ingest's fast path building a v2 row with Arrow from the version 1 columns (tool_calls dropped)
    assert not is_plain_valid(agent_session())
    assert check_record_flags(agent_session()) == (True, False)  # refusal/annotations: unknown fields, kept


def test_version_1_reads_as_before():
    # guards: v2 changing what a v1 record means (a tool_calls key on a v1 message is an unknown field, content null
    # is a violation) or the v1 snapshot layout (the bytes, hence the ids, of every v1 snapshot)
    record = next(sessions(1, seed=3))
    record["messages"][2]["tool_calls"] = [CALL]
    record["messages"][3]["tool_call_id"] = "c1"
    expected = copy.deepcopy(record)
    assert check_record(record) is True
    assert arrow.unknown_fields(record) == {"messages": {"2": {"tool_calls": [CALL]}, "3": {"tool_call_id": "c1"}}}
    with pytest.raises(ContractViolation, match=r"messages\[0\].content: is null"):
        check_record(dict(copy.deepcopy(record), messages=[{"role": "user", "content": None}]))
    assert str(arrow.arrow_schema().field("messages").type) == (
        "list<message: struct<role: string not null, content: string not null, name: string> not null>"
    )
    row = dict(record, extra=json.dumps(arrow.unknown_fields(record)), _source_key="k", _source_line=1)
    table = arrow.records_to_table([row])
    assert arrow.layout_of(table.schema) == 1
    assert arrow.to_record(table.to_pylist()[0]) == expected
    upgraded = arrow.upgrade(table)  # in a snapshot with v2 rows: its columns null, its own keys still in extra
    assert upgraded.column("messages").to_pylist()[0][2]["tool_calls"] is None
    assert arrow.to_record(upgraded.to_pylist()[0]) == expected
    v2 = agent_session()
    check_record(v2)
    mixed = arrow.records_to_table([row, dict(v2, extra=None, _source_key="k", _source_line=2)])
    assert mixed.column("messages").to_pylist()[0][2]["tool_calls"] is None  # built apart from the v2 row
    assert arrow.to_record(mixed.to_pylist()[0]) == expected


def test_v2_rows_round_trip_through_parquet_with_tool_calls_and_null_contents(tmp_path):
    # guards: the snapshot losing a tool call, a tool_call_id, or a null content (read back as "" or dropped)
    v2, v1 = agent_session(), next(sessions(1, seed=4))
    for record in (v2, v1):
        check_record(record)
    rows = [
        dict(
            copy.deepcopy(r),
            extra=json.dumps(arrow.unknown_fields(r)) if r is v2 else None,
            _source_key="k",
            _source_line=i,
        )
        for i, r in enumerate([v1, v2, v1 | {"session_id": "x"}])
    ]
    table = arrow.records_to_table(rows)
    assert arrow.layout_of(table.schema) == 2
    pq.write_table(table, tmp_path / "t.parquet")
    back = [arrow.to_record(r) for r in pq.read_table(tmp_path / "t.parquet").to_pylist()]
    assert back == [v1, agent_session(), v1 | {"session_id": "x"}]
    assert back[1]["messages"][2]["content"] is None and len(back[1]["messages"][2]["tool_calls"]) == 2
    assert arrow.concat([arrow.records_to_table(rows[:1]), table]).num_rows == 4  # layouts mixed: upgraded
    assert pa.concat_tables([arrow.upgrade(arrow.records_to_table(rows[:1])), table]).num_rows == 4
