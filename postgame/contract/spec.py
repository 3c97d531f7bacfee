"""The agent-session record, schema v1 and v2: the one source of truth of the production-log contract.

Version 2 has every field of version 1; only its messages differ: they are OpenAI chat-completions messages, as
tool-using agents log them (OpenHands, SWE-agent, mini-swe-agent, any OpenAI-compatible client). `content` may be
null, an assistant message may carry `tool_calls` (`{"id", "type": "function", "function": {"name", "arguments"}}`,
`arguments` a JSON text), a tool message carries the `tool_call_id` it answers. Which role may or must carry which
field is `NON_NULL_FOR` / `ONLY_FOR`; how the messages of a session must follow each other is
`postgame.contract.trajectory`. A version 1 record is read exactly as before (a `tool_calls` key on one of its
messages is an unknown field).

Everything else is derived from `AGENT_SESSION` below and checked against it by tests/unit/test_contract.py:
the JSON Schema file (`agent_session.schema.json`, regenerated with `python -m postgame.contract`), the per-line
checker used by ingest (`postgame.contract.check`), the Parquet schema of snapshots (`postgame.contract.arrow`) and
the Great Expectations suite run by validate (`postgame.contract.gx`).

Unknown extra fields are allowed everywhere (forward compatible): they are kept, never rejected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SCHEMA_VERSION = 1  # the version every field of which every later version keeps (the snapshot layout of v1 data)
SCHEMA_VERSIONS = (1, 2)
ROLES = ("system", "user", "assistant", "tool")
STATUSES = ("resolved", "unresolved", "error", "abandoned")
FEEDBACK = ("accepted", "rejected", "edited", "none")

# RFC 3339 date-time with a mandatory offset, as ECMA-262 and Python both read it ([0-9], not \d: Python's \d
# also matches non-ASCII digits; no capturing groups: pandas warns about them). Calendar validity (month lengths, no
# year 0) is checked in code as well.
TIMESTAMP_PATTERN = (
    r"^[0-9]{4}-(?:0[1-9]|1[0-2])-[0-9]{2}[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
    r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
)

# Technical ranges: what a Parquet int64 / float64 column can hold. Bigger values are out of range (`schema`).
INT_MAX = 2**63 - 1
FLOAT_MAX = 1.7976931348623157e308

Kind = Literal["string", "integer", "number", "object", "array"]


@dataclass(frozen=True)
class Field:
    """One field of the contract. `required`: the key must be present; `nullable`: its value may be null."""

    name: str
    kind: Kind
    description: str
    required: bool = True
    nullable: bool = False
    enum: tuple[str | int, ...] = ()
    minimum: float | None = None
    min_length: int | None = None
    pattern: str | None = None
    unique: bool = False
    fields: tuple[Field, ...] = ()  # kind == "object"
    items: Field | None = None  # kind == "array"

    @property
    def element(self) -> Field:
        """The field of an array's items; an array field without them is a bug in the spec."""
        if self.items is None:
            raise ValueError(f"field {self.name!r} ({self.kind}) has no items: only an array field has")
        return self.items


def string(name: str, description: str, **kw) -> Field:
    return Field(name, "string", description, **kw)


def integer(name: str, description: str, **kw) -> Field:
    return Field(name, "integer", description, **kw)


def number(name: str, description: str, **kw) -> Field:
    return Field(name, "number", description, **kw)


def obj(name: str, description: str, *fields: Field, **kw) -> Field:
    return Field(name, "object", description, fields=fields, **kw)


def array(name: str, description: str, items: Field, **kw) -> Field:
    return Field(name, "array", description, items=items, **kw)


def _session(version: int, message: Field) -> Field:
    return obj(
        "agent_session",
        "One production session of a coding agent: the task, the conversation, the patch, the outcome.",
        integer(
            "schema_version",
            "Version of this contract; only 1 is known."
            if version == 1
            else "Version of this contract: 2, messages in the OpenAI chat-completions shape.",
            enum=(version,),
        ),
        string("session_id", "Unique id of the session; re-sends carry the same id.", min_length=1, unique=True),
        string(
            "timestamp",
            "When the session ended, RFC 3339 with a time zone (2026-11-29T14:03:11Z).",
            pattern=TIMESTAMP_PATTERN,
        ),
        obj(
            "agent",
            "The model that served the session.",
            string("model_name", "Model name."),
            string("model_version", "Model version."),
        ),
        obj(
            "task",
            "The task the agent worked on.",
            string("instance_id", "Task instance id."),
            string("repo", "Repository of the task."),
            string("problem_statement", "The issue text given to the agent."),
            string("environment", "URI of the task's repository snapshot, when known.", nullable=True),
        ),
        array("messages", "The conversation, in order.", message),
        string("patch", "The agent's final patch (may be empty)."),
        obj(
            "outcome",
            "How the session ended.",
            string("status", "Result of the session.", enum=STATUSES),
            integer("tests_passed", "Tests that passed.", minimum=0),
            integer("tests_failed", "Tests that failed.", minimum=0),
            string("feedback", "What the user did with the patch.", enum=FEEDBACK),
        ),
        obj(
            "usage",
            "What the session cost.",
            integer("prompt_tokens", "Prompt tokens.", minimum=0),
            integer("completion_tokens", "Completion tokens.", minimum=0),
            number("latency_ms", "Wall-clock latency in milliseconds.", minimum=0),
            number("cost_usd", "Cost in US dollars.", minimum=0),
        ),
    )


_NAME = string("name", "Tool or participant name, when there is one.", required=False, nullable=True)
AGENT_SESSION = _session(
    1, obj("message", "One message.", string("role", "Who spoke.", enum=ROLES), string("content", "The text."), _NAME)
)

TOOL_CALL = obj(
    "tool_call",
    "One call of a tool (a function) requested by the assistant.",
    string("id", "Id of the call; the tool message that answers it names it.", min_length=1),
    string("type", "Kind of call.", enum=("function",)),
    obj(
        "function",
        "The function called.",
        string("name", "Function name.", min_length=1),
        string(
            "arguments",
            "The arguments the model wrote, a JSON text when it wrote them right (a call that is not is the "
            "model's mistake: kept and counted, `postgame.contract.trajectory.malformed_calls`).",
        ),
    ),
)
AGENT_SESSION_V2 = _session(
    2,
    obj(
        "message",
        "One message, in the OpenAI chat-completions shape.",
        string("role", "Who spoke.", enum=ROLES),
        string("content", "The text; null on an assistant message that only calls tools.", nullable=True),
        _NAME,
        array("tool_calls", "The tools an assistant message calls.", TOOL_CALL, required=False, nullable=True),
        string("tool_call_id", "On a tool message: the id of the call it answers.", required=False, nullable=True),
    ),
)

SPECS = {1: AGENT_SESSION, 2: AGENT_SESSION_V2}

# Version 2 messages: the fields a role must carry (present and not null), and those only some roles may carry (null
# or absent on the others). The JSON Schema, the checker and the GX suite are generated from these.
NON_NULL_FOR = {"content": ("system", "user", "tool"), "tool_call_id": ("tool",)}
ONLY_FOR = {"tool_calls": ("assistant",), "tool_call_id": ("tool",)}


def version_of(value: object) -> int:
    """The version whose spec judges a record with `schema_version` = `value`: 2 for 2 (or 2.0), else 1 (whose
    checker then names what is wrong with the version)."""
    return 2 if type(value) in (int, float) and value == 2 else 1


def leaves(field: Field = AGENT_SESSION, prefix: str = "") -> list[tuple[str, Field]]:
    """Scalar fields below `field` with their dotted paths, not descending into arrays: `outcome.status`, ..."""
    out: list[tuple[str, Field]] = []
    for sub in field.fields:
        path = f"{prefix}{sub.name}"
        if sub.kind == "object":
            out.extend(leaves(sub, path + "."))
        else:
            out.append((path, sub))
    return out
