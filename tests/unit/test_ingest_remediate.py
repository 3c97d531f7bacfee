"""The pure parts of secret remediation (`postgame.ingest.remediate`, `postgame redact`): rows re-redacted as today's
ingest would store them, the audit's findings summed up without their text, and which snapshot counts while a
replacement is half done (`snapshot.manifests`)."""

from __future__ import annotations

import json

from postgame.contract.arrow import EXTRA, SOURCE_KEY, SOURCE_LINE
from postgame.ingest import snapshot as snap
from postgame.ingest.audit import Finding
from postgame.ingest.remediate import clean_rows, summarize
from tests.support import PLANTED_TOKEN


def test_every_string_of_a_row_is_cleaned_and_its_origin_kept():
    escaped = json.dumps({"token": PLANTED_TOKEN}, ensure_ascii=True).replace("g", "\\u0067", 1)  # `\u0067ithub_pat_`
    row = {
        "session_id": "s1",
        "messages": [
            {"role": "user", "content": f"push with {PLANTED_TOKEN}", "tool_calls": None},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "sh", "arguments": escaped}}],
            },
        ],
        EXTRA: json.dumps({"client": {"api_key": "abc123"}}),
        SOURCE_KEY: "logs/a.jsonl",
        SOURCE_LINE: 7,
    }
    [out] = clean_rows([row])
    assert out["messages"][0]["content"] == "push with <REDACTED:github_token>"
    arguments = out["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {"token": "<REDACTED:github_token>"}  # read as JSON: the escape is seen through
    assert json.loads(out[EXTRA]) == {"client": {"api_key": "<REDACTED:secret>"}}
    assert (out["session_id"], out[SOURCE_KEY], out[SOURCE_LINE], out["messages"][0]["tool_calls"]) == (
        "s1",
        "logs/a.jsonl",
        7,
        None,
    )
    assert clean_rows([out]) == [out]  # redaction is idempotent: a second pass changes nothing


def test_a_summary_counts_records_and_kinds_never_text():
    findings = [
        Finding(3, "messages.content", ("github_token",), "logs/a.jsonl", 4),
        Finding(3, "extra", ("secret",), "logs/a.jsonl", 4),
        Finding(9, "messages.content", ("github_token", "email"), "logs/a.jsonl", 10),
        Finding(0, "quarantine.text", ("aws_key",), "logs/b.jsonl", 1),
    ]
    found = summarize("abc", findings)
    assert (found.records, found.quarantined) == (2, 1)
    assert found.kinds == ("aws_key", "email", "github_token", "secret")
    assert found.fields == ("extra", "messages.content", "quarantine.text")
    assert found.successor is None and found.done == "would replace"


def _manifest(snapshot_id: str, seq: int, supersedes: str | None = None) -> snap.SnapshotManifest:
    return snap.SnapshotManifest.model_construct(snapshot_id=snapshot_id, seq=seq, supersedes=supersedes)


def _record(old: str, new: str) -> snap.Supersession:
    return snap.Supersession(
        snapshot_id=old, superseded_by=new, at="2026-12-01T14:00:00+00:00", records=1, kinds=[], code_version="t"
    )


def test_the_ledger_record_decides_which_of_old_and_successor_counts():
    old, successor, later = _manifest("a", 1), _manifest("b", 1, supersedes="a"), _manifest("c", 2)
    ids = lambda found: [m.snapshot_id for m in found]  # noqa: E731
    # successor written, replacement not recorded (a crash): the old one counts, the successor is not there
    assert ids(snap._counted([old, successor, later], {})) == ["a", "c"]
    # recorded, old not yet deleted: the successor in the old one's place
    assert ids(snap._counted([old, successor, later], {"a": _record("a", "b")})) == ["b", "c"]
    # a successor of other code, left by a crashed run, never counts
    stray = _manifest("x", 1, supersedes="a")
    assert ids(snap._counted([stray, successor, later], {"a": _record("a", "b")})) == ["b", "c"]
    # replaced twice (a later redaction fix): an old id stands for the newest successor
    chain = {"a": _record("a", "b"), "b": _record("b", "d")}
    assert snap.current_id(chain, "a") == "d" and snap.current_id(chain, "c") == "c"
