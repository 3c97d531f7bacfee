"""The ingest commands as a person uses them, and the line between a store failure and bad data."""

from __future__ import annotations

import json

from postgame.contract.synthetic import encode, sessions
from postgame.ingest import is_transient_s3_error
from postgame.ingest.errors import StoreError
from postgame.ingest.lines import REASONS
from tests.support import free_port, postgame_inprocess


def test_ingest_json_then_quarantine_ls_and_show(monkeypatch, capsys, cli_home, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "part-0000.jsonl").write_bytes(encode(sessions(20, seed=1)) + b'{"broken": \n[1]\n')
    code, out, _ = postgame_inprocess(monkeypatch, capsys, "ingest", "--source", str(logs), "--json")
    summary = json.loads(out)
    assert code == 0
    assert set(summary) == {
        "snapshot_id",
        "snapshot_uri",
        "objects_read",
        "objects_skipped",
        "corrupt_objects",
        "records_ingested",
        "duplicates",
        "quarantined",
    }
    assert summary["records_ingested"] == 20 and summary["quarantined"] == dict.fromkeys(REASONS, 0) | {"parse": 2}

    code, out, _ = postgame_inprocess(monkeypatch, capsys, "quarantine", "ls")
    rows = out.strip().splitlines()
    assert code == 0 and len(rows) == 3 and "part-0000.jsonl:21" in rows[0] and "parse" in rows[0]
    entry = rows[1].split()[0]
    code, out, _ = postgame_inprocess(monkeypatch, capsys, "quarantine", "show", entry, "--json")
    shown = json.loads(out)
    assert shown["line"] == 22 and shown["text"] == "[1]" and shown["reason"] == "parse"


def test_unreachable_store_is_one_clear_line_and_exit_1(monkeypatch, capsys, cli_home):
    monkeypatch.setenv("POSTGAME_STORE__ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    code, out, err = postgame_inprocess(monkeypatch, capsys, "ingest", "--source", "s3://logs/agent-logs/")
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: StoreError: ") and "transient" in err


def test_missing_source_folder_is_not_transient(monkeypatch, capsys, cli_home, tmp_path):
    code, _, err = postgame_inprocess(monkeypatch, capsys, "ingest", "--source", str(tmp_path / "nope"))
    assert code == 1 and "does not exist" in err


def test_retry_only_transient_store_errors():
    from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

    def client_error(code: str, status: int) -> ClientError:
        return ClientError({"Error": {"Code": code}, "ResponseMetadata": {"HTTPStatusCode": status}}, "GetObject")

    transient = [
        client_error("SlowDown", 503),
        client_error("InternalError", 500),
        client_error("Whatever", 502),
        EndpointConnectionError(endpoint_url="http://x"),
        ReadTimeoutError(endpoint_url="http://x"),
        ConnectionResetError(),
        StoreError("x", transient=True),
    ]
    permanent = [
        client_error("AccessDenied", 403),
        client_error("NoSuchKey", 404),
        StoreError("x", transient=False),
        ValueError("bad data"),
        KeyError("session_id"),
    ]
    assert all(is_transient_s3_error(e) for e in transient)
    assert not any(is_transient_s3_error(e) for e in permanent)
    try:
        try:
            raise EndpointConnectionError(endpoint_url="http://x")
        except EndpointConnectionError as cause:
            raise StoreError("wrapped", transient=False) from cause
    except StoreError as wrapped:
        assert not is_transient_s3_error(wrapped)  # the wrapper's own verdict wins
