"""One line, one verdict: each defect of the issue lands in its quarantine reason; good lines come out checked."""

from __future__ import annotations

import json

import pytest

from postgame.contract.synthetic import sessions
from postgame.ingest.lines import Rejected, parse_line
from postgame.ingest.reader import TooLarge

GOOD = next(sessions(1, seed=9))


def verdict(line: bytes | TooLarge):
    return parse_line(line, text_chars=1000)


def line_of(record) -> bytes:
    return json.dumps(record).encode()


def with_(path: str, value):
    record = json.loads(json.dumps(GOOD))
    node = record
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    node[last] = value
    return line_of(record)


@pytest.mark.parametrize(
    "line, detail",
    [
        (b'{"schema_version": 1, "session_id": ', "invalid JSON"),
        (b"[1, 2]", "array"),
        (b'"just a string"', "string"),
        (b"42", "number"),
        (b'{"a": "\xff\xfe"}', "UTF-8"),
        (b'{"latency": NaN}', "NaN"),
        (b'{"content": "\\ud800"}', "surrogate"),
        (b"[" * 100_000 + b"]" * 100_000, "nested"),
    ],
)
def test_parse_errors(line, detail):
    result = verdict(line)
    assert isinstance(result, Rejected) and result.reason == "parse"
    assert detail.lower() in result.detail.lower()


@pytest.mark.parametrize(
    "line",
    [
        with_("schema_version", 2),
        with_("session_id", ""),
        with_("timestamp", "2026-11-29 14:03"),
        with_("outcome.status", "won"),
        with_("outcome.tests_passed", -1),
        with_("usage.latency_ms", "fast"),
        with_("usage.prompt_tokens", 2**64),
        with_("usage.cost_usd", 12345.5).replace(b"12345.5", b"1e999"),
        with_("task.environment", 3),
        with_("agent", None),
        line_of({k: v for k, v in GOOD.items() if k != "patch"}),
        line_of({"unrelated": "object"}),
    ],
)
def test_schema_errors(line):
    result = verdict(line)
    assert isinstance(result, Rejected) and result.reason == "schema", result


def test_too_large():
    result = verdict(TooLarge(head=b'{"session_id": "x", "content": "aaaa', size=2 << 20))
    assert result.reason == "too_large" and str(2 << 20) in result.detail and result.truncated


@pytest.mark.parametrize("line", [b"", b"   \r", b"{}", b" {} "])
def test_blank_lines_and_empty_objects_are_skipped(line):
    assert verdict(line) is None


def test_good_line_with_bom_crlf_and_unknown_fields_is_kept():
    record = dict(GOOD, trace_id="t-1", auth={"password": "hunter2"})
    result = verdict(b"\xef\xbb\xbf" + line_of(record) + b"\r")
    assert result.record == dict(record, auth={"password": "<REDACTED:secret>"})
    assert json.loads(result.extra) == {"trace_id": "t-1", "auth": {"password": "<REDACTED:secret>"}}
    assert verdict(line_of(GOOD)).extra is None


def test_a_rejected_line_never_keeps_a_secret():
    secret = "AKIAZ7Q3EXAMPLE0KEY1"
    for line in (
        with_("outcome.status", secret),
        with_("task.repo", 3)[:-1] + f', "k": "{secret}"}}'.encode(),
        f'{{"broken": "{secret}"'.encode(),
        b'{"x": "\\u0041KIAZ7Q3EXAMPLE0KEY1"',
    ):
        result = verdict(line)
        assert isinstance(result, Rejected)
        assert secret not in result.text + result.detail and "KIAZ7Q3EXAMPLE0KEY1" not in result.text
