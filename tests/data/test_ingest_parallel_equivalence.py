"""The parallel ingest path (objects parsed in worker processes, orjson, block pre-filter, Arrow-built rows) gives
exactly what the one-process reference path gives on a dirty corpus: the same snapshot id (so the same data and
quarantine bytes), counts, quarantine entries (reasons, details, redacted texts) and dedupe index.

The corpus is the one of test_quarantine_counts (every quarantine reason, planted secrets, a corrupt gzip, re-sends,
a session_id reused with other content) plus lines that take each branch between the fast and the exact path, and
schema-v2 trajectories after the version 1 lines (the snapshot's layout goes to 2 mid-run): valid ones, with secrets
in tool calls, and each trajectory quarantine reason.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from postgame.contract.synthetic import sessions
from postgame.ingest import snapshot as snap
from postgame.ingest.pipeline import ingest
from postgame.runners import local_mapper
from postgame.settings.ingest import IngestSettings
from postgame.settings.runner import RunnerSettings
from postgame.store import LocalStore
from tests.data.test_quarantine_counts import build_corpus
from tests.data.test_trajectory_ingest import BROKEN, _secrets
from tests.trajectories import agent_session, bad_arguments, broken


def branch_lines() -> bytes:
    """Valid and invalid lines that the fast path must hand over, or take, exactly as the exact path would."""
    base = list(sessions(12, seed=77))
    out = []
    r = base[0]
    r["outcome"]["tests_passed"] = 3.0  # an integral float: converted to int (row built in Python)
    out.append(json.dumps(r))
    r = base[1]
    r["usage"]["latency_ms"] = 250  # an int in a number field
    out.append(json.dumps(r))
    r = base[2]
    r["messages"][0]["trace_id"] = "abc"  # unknown fields, nested and on top, one named like a secret
    r["client"] = {"session_token": "s3cr3t-value", "n": 1}
    out.append(json.dumps(r))
    r = base[3]
    r["messages"][1]["content"] = "café ünïcödé — 日本語"  # raw UTF-8, no escapes
    out.append(json.dumps(r, ensure_ascii=False))
    r = base[4]
    r["messages"][1]["content"] = "café"  # \u escapes (every rule applies: exact path)
    out.append(json.dumps(r))
    r = base[5]
    r["usage"]["prompt_tokens"] = 10**30  # beyond 64 bits: orjson reads a float, json an int
    out.append(json.dumps(r))
    r = base[6]
    r["task"]["problem_statement"] = "mail me at dev@example.com, not git@@ or a @ b"  # an address: email rule
    out.append(json.dumps(r))
    r = base[7]
    r["patch"] = "\n@@ -1 +1 @@\n-x\n+y\n"  # patch hunks: `@` that no guard accepts (fast path)
    out.append(json.dumps(r))
    text = json.dumps(base[8])
    out.append(text.replace('"session_id"', '"session_id": "first", "session_id"', 1))  # a key given twice
    out.append("\ufeff" + json.dumps(base[9]))  # a byte order mark
    out.append("  " + json.dumps(base[10]) + "\t\r")  # surrounding whitespace
    out.append(json.dumps({"a": [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}))  # nested, no contract
    out.append("[" * 2000 + "]" * 2000)  # deeper than json's recursion limit
    r = base[11]
    r["usage"]["cost_usd"] = 0.1 + 0.2  # floats read back bit for bit
    r["usage"]["latency_ms"] = 1e-320
    out.append(json.dumps(r))
    out += arrow_branch_lines()
    return ("\n".join(out) + "\n").encode()


def trajectory_lines() -> list[str]:
    """Schema-v2 lines: each path of a v2 record, and a v1 record that only looks like one."""
    clean = list(sessions(3, seed=79, version=2))
    for r in clean:  # no null content: Arrow would read these lines with the version 1 columns (and drop tool_calls)
        for m in r["messages"]:
            m["content"] = m["content"] or "thinking"
    out = [json.dumps(r) for r in clean]  # clean: fast path, rows built in Python (never bulk, never plain)
    out.append(json.dumps(agent_session("v2-sdk-dump")))  # unknown SDK fields (refusal, annotations): `extra`
    out.append(json.dumps(broken("v2-secrets", _secrets)))  # guards fire: exact path, arguments redacted as JSON
    out.append(json.dumps(dict(agent_session("v2-float-version"), schema_version=2.0)))  # converted to 2
    no_calls = agent_session("v2-no-calls")
    no_calls["messages"] = [m for m in no_calls["messages"] if m["role"] in ("system", "user")]
    out.append(json.dumps(no_calls))  # read in bulk as version 1 columns, then flagged by its version
    r = next(sessions(1, seed=80))
    r["messages"][2]["tool_calls"] = [{"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{"}}]
    out.append(json.dumps(r))  # a v1 record: tool_calls is an unknown field, its arguments never judged
    out.append(json.dumps(bad_arguments("v2-bad-arguments")))  # the model's malformed call: kept, not judged JSON
    out += [json.dumps(record) for record, _, _ in BROKEN]  # every trajectory reason, and v2 schema violations
    return out


def arrow_branch_lines() -> list[str]:
    """Lines that Arrow's JSON reader reads but the contract, or `json`, sees otherwise (the bulk path's checks)."""
    base = list(sessions(16, seed=78))
    text = [json.dumps(r) for r in base]
    latency = [f'"latency_ms": {json.dumps(r["usage"]["latency_ms"])}' for r in base]
    out = [
        text[0].replace(latency[0], '"latency_ms": NaN', 1),  # not JSON, though Arrow reads it
        text[1].replace(latency[1], '"latency_ms": -0', 1),
    ]  # the int 0 for json, -0.0 for Arrow
    r = base[2]
    del r["task"]["environment"]  # absent (a schema error), though the text below spells the key
    r["task"]["problem_statement"] = 'see {"environment": null} in the config'
    out.append(json.dumps(r))
    r = base[3]
    r["task"]["environment"] = None  # null (valid)
    out.append(json.dumps(r))
    out.append(text[4] + text[5])  # two objects on one line
    out.append(text[6] + " null")
    r = base[7]
    r["messages"].append(None)  # a null message
    out.append(json.dumps(r))
    r = base[8]
    r["timestamp"] = "2026-02-29T10:00:00Z"  # not a leap year
    out.append(json.dumps(r))
    r = base[9]
    r["timestamp"] = "2024-02-29T10:00:00+01:00"  # a leap year
    out.append(json.dumps(r))
    r = base[10]
    r["timestamp"] += "\n"  # a date-time and a newline
    out.append(json.dumps(r))
    r = base[11]
    r["schema_version"] = 1.0  # an integral float where an integer is expected
    out.append(json.dumps(r))
    r = base[12]
    r["messages"][1]["content"] = "a\ttab"  # a raw tab inside a string: not JSON
    out.append(json.dumps(r).replace("\\t", "\t"))
    r = base[13]
    r["usage"]["latency_ms"] = 1234567890123456  # an integer of 16 digits in a number field
    out.append(json.dumps(r))
    r = copy.deepcopy(base[13])
    r["session_id"] += "-big"
    r["usage"]["latency_ms"] = 2**53 + 1  # no float64 equals it: quarantined (it stopped ingest on both paths)
    out.append(json.dumps(r))
    r["session_id"] += "-exact"
    r["usage"]["latency_ms"] = 2**60  # a float64 exactly: kept, as that float
    out.append(json.dumps(r))
    r = base[14]
    r["messages"][2].pop("name", None)  # name absent or null: both valid
    r["messages"][3]["name"] = None
    out.append(json.dumps(r))
    out.append(text[15].replace('"outcome": {', '"outcome": {"status": "resolved", ', 1))  # a key given twice
    return out


def run(logs: Path, home: Path, runner: RunnerSettings | None) -> tuple[snap.SnapshotManifest, dict]:
    settings = IngestSettings(batch_rows=7)  # several row groups, cut inside objects
    state = LocalStore(home / "store")
    source = LocalStore(logs)
    if runner is None:
        summary = ingest(source, "", state=state, settings=settings, workdir=home / "tmp", source_uri=str(logs))
    else:
        with local_mapper(runner) as mapper:
            summary = ingest(
                source, "", state=state, settings=settings, workdir=home / "tmp", source_uri=str(logs), mapper=mapper
            )
    manifest = snap.resolve(state, settings.state_prefix, summary.snapshot_id)
    outputs = {
        "summary": summary.model_dump(exclude={"snapshot_uri", "manifest_uri"}),
        "counts": manifest.counts.model_dump(),
        "sources": [s.model_dump() for s in manifest.sources],
        "corrupt": [c.model_dump() for c in manifest.corrupt_objects],
        "files": {
            name: getattr(manifest, name).model_dump(exclude={"key"}) for name in ("data", "quarantine", "seen_index")
        },
        "quarantine": [e.model_dump() for e in snap.read_quarantine(state, manifest)],
        "rows": pq.read_table(state.root / manifest.data.key).to_pylist(),
        "row_groups": pq.ParquetFile(state.root / manifest.data.key).metadata.num_row_groups,
        "seen": pq.read_table(state.root / manifest.seen_index.key).to_pylist(),
    }
    return manifest, outputs


@pytest.mark.parametrize("kind", ["process", "thread"])
def test_parallel_ingest_gives_the_one_process_snapshot_byte_for_byte(tmp_path, kind):
    logs = tmp_path / "logs"
    build_corpus(logs)
    (logs / "agent-logs" / "dt=2026-11-29" / "part-0004.jsonl").write_bytes(branch_lines())
    # an object of its own: a line Arrow refuses (a key given twice) would send a whole segment to Python's rows
    (logs / "agent-logs" / "dt=2026-11-29" / "part-0005.jsonl").write_bytes(
        ("\n".join(trajectory_lines()) + "\n").encode()
    )
    reference, expected = run(logs, tmp_path / "serial", None)
    manifest, got = run(logs, tmp_path / kind, RunnerSettings(kind=kind, workers=2))
    assert expected["row_groups"] > 3 and len(expected["quarantine"]) > 20  # the corpus exercises both
    reasons = {e["reason"] for e in expected["quarantine"]}
    assert {"orphan_tool_message", "message_order"} <= reasons
    assert reference.schema_version == 2 and {r["session_id"] for r in expected["rows"]} >= {
        "v2-sdk-dump",
        "v2-secrets",
        "v2-float-version",
        "v2-no-calls",
        "v2-bad-arguments",
    }
    for key in expected:
        assert got[key] == expected[key], key
    assert manifest.snapshot_id == reference.snapshot_id
