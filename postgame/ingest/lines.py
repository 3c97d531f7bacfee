"""One log line in, one verdict out: a checked and redacted record, a rejection with its reason, or nothing.

    parse_line(b'{"schema_version": 1, ...}', text_chars=65536)   # -> Accepted | Rejected | None (skip)

Reasons: `parse` (invalid UTF-8, invalid JSON, NaN/Infinity, a lone surrogate escape, a JSON value that is not an
object), `schema` (anything the contract rejects), `too_large` (over the line cap, decided by the reader), and for a
version 2 session whose messages break a trajectory rule (`postgame.contract.trajectory`): `orphan_tool_message`,
`message_order` (a call whose arguments are not JSON is the model's mistake, and kept). Blank lines and `{}` are
skipped. The text kept with a rejection is redacted before it leaves this module.

The arguments of a tool call are a JSON text inside a string: they are redacted as JSON (`redact.redact_json_text`),
so that they stay a JSON text, and a secret escaped inside them (`\\u0041KIA...`) is seen as what it spells, in
arguments the model wrote that are not JSON too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from postgame.contract.arrow import unknown_fields
from postgame.contract.check import ContractViolation, check_record
from postgame.contract.trajectory import TRAJECTORY_REASONS, TrajectoryReason, is_json, trajectory_problem
from postgame.ingest.reader import TooLarge
from postgame.ingest.redact import RULES, Rule, redact_json_text, redact_raw_line, redact_text, redact_value, rules_for

Reason = Literal["parse", "schema", "too_large"] | TrajectoryReason
REASONS: tuple[Reason, ...] = ("parse", "schema", "too_large", *TRAJECTORY_REASONS)
BOM = b"\xef\xbb\xbf"
_MARGIN = 4096  # redact a little past the cut, so that a secret straddling it is not left half-visible


@dataclass(frozen=True)
class Accepted:
    record: dict  # checked and redacted; its unknown fields are only safe to store through `extra`
    extra: str | None  # the unknown fields as JSON, redacted (values of secret-named keys too), or None


@dataclass(frozen=True)
class Rejected:
    reason: Reason
    detail: str
    text: str  # redacted, at most text_chars characters
    truncated: bool


def _cut(text: str, text_chars: int) -> tuple[str, bool]:
    if len(text) <= text_chars:
        return redact_raw_line(text), False
    return redact_raw_line(text[: text_chars + _MARGIN])[:text_chars], True


def _json_type(value) -> str:
    return {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}.get(type(value), "null")


def _no_constants(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _encodable(value) -> bool:
    """False when a string holds a lone surrogate (`\\ud800`): valid JSON syntax, but not Unicode text."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _arguments(record: dict) -> list[dict]:
    """The `function` objects of a version 2 record's tool calls whose `arguments` is a string (any record: a rejected
    one may be ill-formed anywhere)."""
    if record.get("schema_version") != 2 or type(record.get("messages")) is not list:
        return []
    out = []
    for message in record["messages"]:
        calls = message.get("tool_calls") if type(message) is dict else None
        for call in calls if type(calls) is list else ():
            function = call.get("function") if type(call) is dict else None
            if type(function) is dict and type(function.get("arguments")) is str:
                out.append(function)
    return out


def redact_record(record: dict, rules: tuple[Rule, ...]) -> None:
    """Redact a checked record in place: every string by `rules`, tool-call arguments as JSON texts."""
    functions = _arguments(record)
    held = [function["arguments"] for function in functions]
    for function in functions:
        function["arguments"] = ""  # not redacted as text: a match may span its JSON strings and break it
    redact_value(record, rules)
    for function, arguments in zip(functions, held, strict=True):
        function["arguments"] = redact_json_text(arguments, rules)


def _shown(value: dict) -> str:
    """A rejected record as quarantine text: redacted by every rule (secret-named keys too), tool-call arguments
    redacted as JSON, or when they are not JSON read for people (escapes resolved first, as for a line that is not
    JSON)."""
    for function in _arguments(value):
        arguments = function["arguments"]
        function["arguments"] = redact_json_text(arguments, RULES) if is_json(arguments) else redact_raw_line(arguments)
    return json.dumps(redact_value(value, RULES, secret_keys=True), ensure_ascii=False)


def parse_line(line: bytes | TooLarge, *, text_chars: int, max_line_bytes: int = 1 << 20) -> Accepted | Rejected | None:
    """The verdict on one line (None: skip it). Rejections keep at most `text_chars` characters of the line."""
    if isinstance(line, TooLarge):
        text, _ = _cut(line.head.decode("utf-8", "replace"), text_chars)
        return Rejected(
            "too_large", f"line of {line.size} bytes is over the limit of {max_line_bytes} bytes", text, True
        )
    stripped = line.strip()
    if stripped.startswith(BOM):  # written by some Windows tools; not part of the record
        stripped = stripped[len(BOM) :].lstrip()
    if not stripped:
        return None
    try:
        text = stripped.decode("utf-8")
    except UnicodeDecodeError as exc:
        shown, cut = _cut(stripped.decode("utf-8", "replace"), text_chars)
        return Rejected("parse", f"invalid UTF-8 at byte {exc.start}", shown, cut)
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:
        shown, cut = _cut(text, text_chars)
        message = str(exc).splitlines()[0] if not isinstance(exc, RecursionError) else "nested too deeply"
        return Rejected("parse", f"invalid JSON: {redact_text(message)}", shown, cut)
    if type(value) is not dict:
        shown, cut = _cut(text, text_chars)
        return Rejected("parse", f"a JSON {_json_type(value)}, not an object", shown, cut)
    if not value:
        return None
    if ("\\ud" in text or "\\uD" in text) and not _encodable(value):
        shown, cut = _cut(text, text_chars)
        return Rejected("parse", "invalid Unicode: a lone surrogate escape", shown, cut)
    try:
        has_unknown = check_record(value)
    except ContractViolation as exc:
        redacted = _shown(value)
        return Rejected("schema", redact_text(str(exc)), redacted[:text_chars], len(redacted) > text_chars)
    problem = trajectory_problem(value["messages"]) if value["schema_version"] == 2 else None
    if problem is not None:
        redacted = _shown(value)
        return Rejected(problem.reason, redact_text(str(problem)), redacted[:text_chars], len(redacted) > text_chars)
    rules = rules_for(text)
    if rules:
        redact_record(value, rules)
    unknown = unknown_fields(value) if has_unknown else None
    if not unknown:
        return Accepted(value, None)
    return Accepted(
        value, json.dumps(redact_value(unknown, RULES, secret_keys=True), ensure_ascii=False, sort_keys=True)
    )
