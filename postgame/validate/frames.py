"""Snapshot table -> the pandas frames the expectations run on.

`sessions`: one row per record, nested objects flattened to dotted columns (`outcome.status`); lists, `extra` and
lineage left out. `messages`: one row per message, with the `session_id` and `schema_version` of its record and its
`position` in the session. `tool_calls`: one row per tool call (`id`, `type`, `function.name`, `function.arguments`),
with the `session_id`, `schema_version`, `position` and `role` of its message. Strings become pandas `StringDtype`
(Arrow-backed: no Python object per value, so a million sessions fit), integers int64 and numbers float64, which is
what `postgame.contract.gx` expects. A snapshot of layout 1 is upgraded first (`contract.arrow.upgrade`): every frame
has every column.

The trajectory rules (`postgame.contract.trajectory`) are facts about a message's neighbours; they are derived here,
from the snapshot alone, as columns the suite can hold to a value set (version 2 sessions only; null elsewhere):
- `messages.follows`: the role of the message before (`assistant+tool_calls` for an assistant message with calls;
  null for the first);
- `messages.answers`, on a tool message: `run` when its `tool_call_id` is a call of the assistant message its run of
  tool messages follows, `earlier` when it is only a call of some earlier message, null when of none;
- `tool_calls.answers`: how many tool messages of the run right after its message answer the call;
  `tool_calls.last_message`: its message is the session's last (whose calls may stay unanswered).
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from postgame.contract.arrow import layout_of, upgrade
from postgame.contract.spec import AGENT_SESSION

_STRING = pd.StringDtype()
CALLED = "assistant+tool_calls"


def _types(arrow_type: pa.DataType):
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return _STRING
    return None


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    return table.to_pandas(types_mapper=_types)


def sessions_frame(table: pa.Table) -> pd.DataFrame:
    keep = [f.name for f in AGENT_SESSION.fields if f.kind != "array" and f.name in table.column_names]
    return _to_pandas(table.select(keep).flatten())


def _flat(column: pa.Array) -> tuple[pa.Table, pa.Array, pa.Array]:
    """The items of a list column as a table, the parent row of each and its position in its list."""
    items = pc.list_flatten(column)
    parents = pc.list_parent_indices(column)
    flat = (
        pa.Table.from_struct_array(items)
        if len(items)
        else pa.table({f.name: pa.array([], f.type) for f in column.type.value_type})
    )
    starts = pc.take(column.offsets, parents) if len(items) else pa.array([], pa.int32())
    position = pc.subtract(
        pa.array(range(len(items)), pa.int64()), pc.subtract(pc.cast(starts, pa.int64()), column.offsets[0].as_py())
    )
    return flat, parents, position


def _neighbours(sessions: list[list[dict]]) -> tuple[list, list, list]:
    """Per message of version 2 sessions: `follows` and `answers`; per tool call: `answers` (see the docstring)."""
    follows: list[str | None] = []
    answers: list[str | None] = []
    answered: list[int] = []
    for messages in sessions:
        before: str | None = None
        run: set[str] | None = None
        earlier: set[str] = set()
        for at, message in enumerate(messages):
            role = message["role"]
            follows.append(before)
            calls = message["tool_calls"] or []
            if role == "tool":
                call_id = message["tool_call_id"]
                answers.append(
                    "run" if run is not None and call_id in run else "earlier" if call_id in earlier else None
                )
            else:
                answers.append(None)
                run = {call["id"] for call in calls} if role == "assistant" and calls else None
            earlier.update(call["id"] for call in calls)
            before = CALLED if role == "assistant" and calls else role
            if calls:
                replies = []
                for after in messages[at + 1 :]:
                    if after["role"] != "tool":
                        break
                    replies.append(after["tool_call_id"])
                answered += [replies.count(call["id"]) for call in calls]
    return follows, answers, answered


def list_frames(table: pa.Table) -> dict[str, pd.DataFrame]:
    """{"messages": frame, "tool_calls": frame} of a snapshot table (see the module docstring)."""
    derive = layout_of(table.schema) == 2
    table = upgrade(table)
    column = (
        table.column("messages").combine_chunks()
        if table.num_rows
        else pa.array([], table.schema.field("messages").type)
    )
    messages, parents, position = _flat(column)
    version = pc.take(table.column("schema_version"), parents)
    session_id = pc.take(table.column("session_id"), parents)
    calls, call_parents, _ = _flat(messages.column("tool_calls").combine_chunks())
    n, k = messages.num_rows, calls.num_rows
    follows, answers, answered = [None] * n, [None] * n, [None] * k
    if derive and n:
        v2 = pc.equal(version, 2)
        if pc.any(v2).as_py():  # the version 2 messages are those of the version 2 rows, in order
            rows = pc.equal(table.column("schema_version"), 2)
            found_follows, found_answers, found_answered = _neighbours(
                table.filter(rows).column("messages").to_pylist()
            )
            for i, before, answer in zip(pc.indices_nonzero(v2).to_pylist(), found_follows, found_answers, strict=True):
                follows[i], answers[i] = before, answer
            for i, count in zip(pc.indices_nonzero(pc.take(v2, call_parents)).to_pylist(), found_answered, strict=True):
                answered[i] = count
    lengths = pc.list_value_length(column)
    out = {}
    frame = messages.drop_columns(["tool_calls"])
    for name, values in (
        ("session_id", session_id),
        ("schema_version", version),
        ("position", position),
        ("follows", pa.array(follows, pa.string())),
        ("answers", pa.array(answers, pa.string())),
    ):
        frame = frame.append_column(name, values)
    out["messages"] = _to_pandas(frame)
    calls = calls.flatten()
    extra = {
        "session_id": pc.take(session_id, call_parents),
        "schema_version": pc.take(version, call_parents),
        "position": pc.take(position, call_parents),
        "role": pc.take(messages.column("role"), call_parents),
        "last_message": pc.equal(
            pc.take(position, call_parents),
            pc.subtract(pc.cast(pc.take(lengths, pc.take(parents, call_parents)), pa.int64()), 1),
        ),
        "answers": pa.array(answered, pa.int64()),
    }
    for name, values in extra.items():
        calls = calls.append_column(name, values)
    out["tool_calls"] = _to_pandas(calls)
    return out
