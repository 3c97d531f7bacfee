"""`postgame validate --json` as a person uses it, on the folder store: the report of a good snapshot, the report and
exit 1 of one that fails a critical expectation, and a named error for a snapshot that does not exist."""

from __future__ import annotations

import json
from pathlib import Path

from postgame.contract.synthetic import encode, sessions
from tests.support import postgame_inprocess

REPORT_KEYS = {
    "snapshot_id",
    "previous_snapshot_id",
    "drift_note",
    "passed",
    "critical_failures",
    "warnings",
    "results",
    "metrics",
    "previous_metrics",
    "docs_path",
    "docs_pages",
    "report_path",
    "validated_at",
}


def ingest(monkeypatch, capsys, logs: Path) -> str:
    code, out, err = postgame_inprocess(monkeypatch, capsys, "ingest", "--source", str(logs), "--json")
    assert code == 0, err
    return json.loads(out)["snapshot_id"]


def test_validate_json_round_trip(monkeypatch, capsys, cli_home, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "part-0000.jsonl").write_bytes(encode(sessions(30, seed=1)))
    good = ingest(monkeypatch, capsys, logs)

    code, out, err = postgame_inprocess(monkeypatch, capsys, "validate", "--snapshot", good[:12], "--json")
    report = json.loads(out)  # stdout is the report and nothing else
    assert code == 0, err
    assert set(report) == REPORT_KEYS
    assert report["snapshot_id"] == good and report["previous_snapshot_id"] is None
    assert report["passed"] is True and report["critical_failures"] == []
    assert report["metrics"]["records"] == 30 and len(report["results"]) > 0
    assert json.loads(Path(report["report_path"]).read_text()) == report  # the same report is kept under home

    # 9 lines of garbage and one record: the quarantine rate (critical) fails; the report still comes, with exit 1.
    (logs / "part-0001.jsonl").write_bytes(b"{not json\n" * 9 + encode(sessions(1, seed=2)))
    bad = ingest(monkeypatch, capsys, logs)
    code, out, err = postgame_inprocess(monkeypatch, capsys, "validate", "--json")  # latest
    report = json.loads(out)
    assert code == 1
    assert report["snapshot_id"] == bad and report["previous_snapshot_id"] == good and report["passed"] is False
    failed = "batch.expect_column_values_to_be_between(quarantine_rate)"
    assert [r["name"] for r in report["critical_failures"]] == [failed]
    assert err.startswith(f"error: DataValidationError: snapshot {bad[:12]} failed 1 critical expectation(s): {failed}")


def test_unknown_snapshot_is_a_named_error(monkeypatch, capsys, cli_home, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "part-0000.jsonl").write_bytes(encode(sessions(5, seed=1)))
    ingest(monkeypatch, capsys, logs)
    code, out, err = postgame_inprocess(monkeypatch, capsys, "validate", "--snapshot", "ffffffffffff", "--json")
    assert code == 1 and out == ""
    assert err.startswith("error: PostgameError: no snapshot 'ffffffffffff' in ") and "Traceback" not in err


def test_validate_tells_each_phase_and_batch_and_draws_no_bar_under_json(monkeypatch, capsys, cli_home, tmp_path):
    """`postgame validate` takes half a minute (Great Expectations): a spinner names the phase it is in."""
    from postgame import runtime
    from postgame.validate.run import validate_snapshot

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "part-0000.jsonl").write_bytes(encode(sessions(30, seed=1)))
    snapshot = ingest(monkeypatch, capsys, logs)
    told: list[tuple[str, int]] = []
    validate_snapshot(snapshot, cfg=runtime.current_config(), progress=lambda text, done: told.append((text, done)))
    assert told == [
        ("batch metrics", 0),
        ("loading Great Expectations", 0),
        ("batch 1 validated", 1),  # the snapshot's one row group
        ("batch 2 validated", 1),  # the whole columns and the batch metrics
        ("building the Data Docs", 0),
    ]
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")  # stderr would take a bar
    code, out, err = postgame_inprocess(monkeypatch, capsys, "validate", "--snapshot", snapshot, "--json")
    assert code == 0 and json.loads(out)["passed"] and "validate:" not in err
