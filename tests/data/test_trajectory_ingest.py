"""A tool-using session logged the way an OpenAI-compatible agent logs it (schema v2) goes the whole way: ingested by
the real ingest (both paths), kept, validated by the real GX suite, curated with its tool calls intact. Broken
trajectories are quarantined with their own reasons; secrets in tool calls and tool results are redacted, and the
arguments stay JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from postgame.contract.arrow import to_record
from postgame.contract.synthetic import encode, sessions
from postgame.curate import curate_snapshots, load_rows, rows_of
from postgame.errors import DataValidationError
from postgame.ingest import load_snapshot, run_ingest, snapshot_manifest
from postgame.ingest.catalog import quarantine_entries
from postgame.validate import run_validation, validate_snapshot
from tests.data.test_validate_snapshot import commit_unchecked_snapshot
from tests.support import make_config
from tests.trajectories import agent_session, bad_arguments, broken, orphan_tool_message

PATHS = ["serial", "thread"]  # the one-process reference path, and objects parsed by `parse_object` in a pool


def _cfg(home: Path, runner: str):
    # row groups of 2: version 1 rows are written before the first version 2 row comes (the layout upgrade)
    return make_config(home, runner={"kind": runner, "workers": 2}, curate={"min_records": 1}, ingest={"batch_rows": 2})


def _ingest(cfg, folder: Path, records: list[dict]):
    folder.mkdir()
    (folder / "part-0000.jsonl").write_bytes(encode(records))
    return run_ingest(str(folder), cfg=cfg)


@pytest.mark.parametrize("runner", PATHS)
def test_an_openai_agent_session_is_kept_validated_and_curated_with_its_tool_calls(home, tmp_path, runner):
    # guards: the v2 trajectory dropped, quarantined, flattened or losing tool_calls / tool_call_id / null contents
    # anywhere between the log line and the curated SFT row
    cfg = _cfg(home, runner)
    session = agent_session()
    summary = _ingest(cfg, tmp_path / "logs", [*sessions(3, seed=31), session])  # v1 traffic first: layout upgraded
    assert summary.records_ingested == 4 and sum(summary.quarantined.values()) == 0
    assert snapshot_manifest(summary.snapshot_id, cfg=cfg).schema_version == 2
    rows = {r["session_id"]: r for r in load_snapshot(summary.snapshot_id, cfg=cfg).to_pylist()}
    assert to_record(rows[session["session_id"]]) == agent_session()  # lossless, unknown SDK fields included
    assert [to_record(rows[r["session_id"]]) for r in sessions(3, seed=31)] == list(sessions(3, seed=31))
    report = validate_snapshot(summary.snapshot_id, cfg=cfg)
    assert report.passed and {r.table for r in report.results} >= {"messages", "tool_calls"}
    dataset = curate_snapshots(cfg, [summary.snapshot_id], {"textkit__textkit-17": "train"})
    (sft,) = rows_of(load_rows(cfg, dataset), "sft")
    assert sft["messages"] == agent_session()["messages"]
    assert sft["messages"][2]["content"] is None and [c["id"] for c in sft["messages"][2]["tool_calls"]] == [
        "call_Xk2bQ9vTqz",
        "call_Ld81ZrWm3c",
    ]
    assert sft["completion"] == "Fixed: slugify('') now returns ''; the slug tests pass."


def _order_broken(r):
    r["messages"].insert(2, r["messages"].pop(3))  # a tool result before the call it answers


def _on_user(r):
    r["messages"][1]["tool_calls"] = r["messages"][2]["tool_calls"]


def _no_id(r):
    del r["messages"][3]["tool_call_id"]


def _wrong_shape(r):
    r["messages"][5]["tool_calls"][0]["function"]["arguments"] = {"command": "ls"}


def _unanswered(r):
    del r["messages"][4]


BROKEN = [  # (record, reason, where the detail points)
    (orphan_tool_message(), "orphan_tool_message", "messages[6].tool_call_id: 'call_neverMade01' answers no tool call"),
    (broken("swe-order", _order_broken), "orphan_tool_message", "messages[2].tool_call_id"),
    (broken("swe-unanswered", _unanswered), "message_order", "messages[2].tool_calls: the call 'call_Ld81ZrWm3c'"),
    (broken("swe-on-user", _on_user), "schema", "messages[1].tool_calls: only an assistant message may carry it"),
    (broken("swe-no-id", _no_id), "schema", "messages[3].tool_call_id: is required on a tool message"),
    (broken("swe-shape", _wrong_shape), "schema", "messages[5].tool_calls[0].function.arguments: expected string"),
]


@pytest.mark.parametrize("runner", PATHS)
def test_broken_trajectories_are_quarantined_with_their_own_reason(home, tmp_path, runner):
    # guards: an orphan tool message or a malformed tool call kept for training, dropped without a reason, or given
    # another path's reason; and a call whose arguments the model wrote wrong (not JSON) quarantined as if the log
    # were bad: that session is kept as logged, its call intact
    cfg = _cfg(home, runner)
    records = [agent_session("swe-good"), bad_arguments(), *(r for r, _, _ in BROKEN)]
    summary = _ingest(cfg, tmp_path / "logs", records)
    assert summary.records_ingested == 2
    assert summary.quarantined == {
        "parse": 0,
        "schema": 3,
        "too_large": 0,
        "orphan_tool_message": 2,
        "message_order": 1,
    }
    kept = {r["session_id"]: r for r in map(to_record, load_snapshot(summary.snapshot_id, cfg=cfg).to_pylist())}
    call = kept["swe-bad-arguments"]["messages"][2]["tool_calls"][1]["function"]
    assert call["arguments"] == "{'command': 'view', path: /repo}"
    entries = [entry for _, entry in quarantine_entries(cfg=cfg, snapshot_id=summary.snapshot_id)]
    assert [(e.line, e.reason) for e in entries] == [(i + 3, reason) for i, (_, reason, _) in enumerate(BROKEN)]
    for entry, (_, _, detail) in zip(entries, BROKEN, strict=True):
        assert entry.detail.startswith(detail), entry.detail
        assert json.loads(entry.text)["schema_version"] == 2  # the record kept for people to read


SECRET_TOKEN = "ghp_" + "TrajectoryToken0123456789abcdefghijk"
SECRET_PASSWORD = "Tr4jP4ssw0rd"
SECRET_KEY_ESCAPED = "AKIATRAJECTORYESC123"


def _secrets(r):
    calls = r["messages"][2]["tool_calls"]
    calls[0]["function"]["arguments"] = json.dumps({"command": f"curl -H 'Authorization: token {SECRET_TOKEN}'"})
    # a URL written with escaped slashes inside the JSON text (no \\u escape in this line: only its guards fire)
    calls[1]["function"]["arguments"] = '{"url": "https:\\/\\/deploy:' + SECRET_PASSWORD + '@git.example.com"}'
    r["messages"][3]["content"] = f"export GITHUB_TOKEN={SECRET_TOKEN}"
    r["task"]["environment"] = None  # the line's only `://` is the escaped one


def _malformed_secret(r):  # arguments the model wrote wrong, with a token in them, one of its letters escaped
    r["messages"][2]["tool_calls"][0]["function"]["arguments"] = "{'token': '\\u0067" + SECRET_TOKEN[1:] + "'"


def _escaped_key(r):  # a key spelt by a \\u escape inside the JSON text: the text shows no key, its value does
    r["messages"][5]["tool_calls"][0]["function"]["arguments"] = '{"key": "\\u0041' + SECRET_KEY_ESCAPED[1:] + '"}'


@pytest.mark.parametrize("runner", PATHS)
def test_secrets_in_tool_calls_and_results_are_redacted_and_arguments_stay_json(home, tmp_path, runner):
    # guards: a secret stored in clear inside tool-call arguments (escaped at the second JSON level too) or a tool
    # result, and redaction that breaks the arguments' JSON (the GX suite would then stop the snapshot)
    cfg = _cfg(home, runner)
    record = broken("swe-secrets", _secrets)
    assert SECRET_PASSWORD in json.loads(record["messages"][2]["tool_calls"][1]["function"]["arguments"])["url"]
    malformed = broken("swe-malformed-secret", _malformed_secret)
    summary = _ingest(cfg, tmp_path / "logs", [record, broken("swe-escaped-key", _escaped_key), malformed])
    assert summary.records_ingested == 3
    stored, escaped, wrong = (to_record(r) for r in load_snapshot(summary.snapshot_id, cfg=cfg).to_pylist())
    text = json.dumps([stored, escaped, wrong])
    assert wrong["messages"][2]["tool_calls"][0]["function"]["arguments"] == "{'token': '<REDACTED:github_token>'"
    for secret in (SECRET_TOKEN, SECRET_PASSWORD, SECRET_KEY_ESCAPED, SECRET_KEY_ESCAPED[1:]):
        assert secret not in text
    calls = stored["messages"][2]["tool_calls"]
    assert json.loads(calls[0]["function"]["arguments"]) == {
        "command": "curl -H 'Authorization: token <REDACTED:github_token>'"
    }
    assert json.loads(calls[1]["function"]["arguments"]) == {
        "url": "https://deploy:<REDACTED:url_password>@git.example.com"
    }
    assert stored["messages"][3]["content"] == "export GITHUB_TOKEN=<REDACTED:github_token>"
    assert json.loads(escaped["messages"][5]["tool_calls"][0]["function"]["arguments"]) == {"key": "<REDACTED:aws_key>"}
    assert run_validation(summary.snapshot_id, cfg=cfg).passed


def test_the_gx_suite_stops_a_snapshot_whose_trajectories_break_the_rules(cfg):
    # guards: the data gate trusting ingest alone: a snapshot from an older or buggy writer with broken trajectories
    # must not reach training, each rule failing by name
    first_tool = agent_session("swe-first-tool")
    first_tool["messages"].insert(0, {"role": "tool", "tool_call_id": "call_Xk2bQ9vTqz", "content": "x"})
    rows = [
        agent_session("swe-ok"),
        orphan_tool_message(),
        bad_arguments(),  # the model's mistake, not the log's: no expectation fails on it
        broken("swe-unanswered", _unanswered),
        broken("swe-order", _order_broken),
        first_tool,
        *sessions(3, seed=32),
    ]
    with pytest.raises(DataValidationError) as failure:
        validate_snapshot(commit_unchecked_snapshot(cfg, rows), cfg=cfg)
    tool = "where schema_version == 2 and role == 'tool'"
    assert set(failure.value.failed) == {
        f"messages.expect_column_values_to_not_be_null(answers) {tool}",  # orphan, and a result before its call
        f"messages.expect_column_values_to_be_in_set(follows) {tool}",  # a tool message after a user message
        "messages.expect_column_values_to_be_in_set(role) where schema_version == 2 and position == 0",
        "tool_calls.expect_column_values_to_be_between(answers) where last_message == False",
    }


def test_a_rising_share_of_malformed_calls_is_a_warning_or_a_stop_as_configured(home, tmp_path):
    # guards: the deployed model writing broken tool calls in a third of its sessions with no word from the data gate
    # (each such session is kept and counted, never quarantined, so the quarantine rate cannot see it); and a
    # single-answer snapshot, which holds no calls, measured as 0 malformed instead of not measured
    cfg = _cfg(home, "serial")
    plain = _ingest(cfg, tmp_path / "v1", list(sessions(3, seed=33)))
    report = validate_snapshot(plain.snapshot_id, cfg=cfg)
    assert report.metrics.malformed_call_share is None and "malformed_call_share" not in {
        r.column for r in report.results
    }

    records = [agent_session("swe-a"), agent_session("swe-b"), bad_arguments("swe-c"), *sessions(1, seed=34)]
    summary = _ingest(cfg, tmp_path / "logs", records)
    assert summary.records_ingested == 4
    report = validate_snapshot(summary.snapshot_id, cfg=cfg)  # a warning: the cycle goes on
    assert report.passed and report.metrics.malformed_call_share == 0.25
    assert [w.column for w in report.warnings] == ["malformed_call_share"]

    strict = cfg.validate_.model_copy(
        update={"malformed_call_share_max": 0.3, "malformed_call_share_severity": "critical"}
    )
    assert validate_snapshot(summary.snapshot_id, cfg=cfg.model_copy(update={"validate_": strict})).passed
    strict = strict.model_copy(update={"malformed_call_share_max": 0.2})
    with pytest.raises(DataValidationError) as failure:
        validate_snapshot(summary.snapshot_id, cfg=cfg.model_copy(update={"validate_": strict}))
    assert failure.value.failed == ["batch.expect_column_values_to_be_between(malformed_call_share)"]
