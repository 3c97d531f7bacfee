"""A corpus with every defect of the issue: exact counts per quarantine reason, nothing good lost, and no planted
secret in any file that ingest and validate write (snapshot, quarantine, dedupe index, Data Docs, reports), in the
logs, or in what the CLI and the Prefect artifact print."""

from __future__ import annotations

import gzip
import json
import logging
import zlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from postgame.contract.synthetic import encode, sessions
from postgame.errors import DataValidationError
from postgame.ingest import load_snapshot, run_ingest
from postgame.ingest.catalog import quarantine_entries
from postgame.ingest.lines import REASONS

# Planted secrets (fake, with real shapes). Each must vanish from every output.
AWS_KEY = "AKIAQ4EXAMPLE7PLANTD"
AWS_KEY_ESCAPED = "AKIAPLANTEDESCAPE123"  # written as \u0041KIA... in the JSON line
AWS_KEY_IN_BROKEN_LINE = "AKIAPARSEERRORLINE01"
GH_TOKEN = "ghp_" + "PlantedGithubToken0123456789abcdefghi"
GH_TOKEN_IN_HUGE_LINE = "ghp_" + "HugeLineGithubToken0123456789abcdefg"
PEM_BODY = "MIIEowIBAAKCAQEAplantedPrivateKeyBodyLine0000000000000000000000"
PEM = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----"
BEARER = "eyJhbGciOiJIUzI1NiJ9.cGxhbnRlZA.plantedBearerSignature42"
URL_PASSWORD = "Pl4ntedPassw0rd"
EMAIL = "planted.person@example.org"
EMAIL_IN_BAD_RECORD = "schema.error.person@example.org"
API_KEY = "planted-api-key-value-123"
SECRETS = [
    AWS_KEY,
    AWS_KEY_ESCAPED,
    AWS_KEY_IN_BROKEN_LINE,
    GH_TOKEN,
    GH_TOKEN_IN_HUGE_LINE,
    PEM_BODY,
    BEARER,
    URL_PASSWORD,
    EMAIL,
    EMAIL_IN_BAD_RECORD,
    API_KEY,
    "KIAPLANTEDESCAPE123",
]


def line(record) -> bytes:
    return json.dumps(record).encode() + b"\n"


def changed(record, path: str, value=None, delete: bool = False) -> dict:
    record = json.loads(json.dumps(record))
    node = record
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    if delete:
        del node[last]
    else:
        node[last] = value
    return record


def build_corpus(folder: Path) -> dict:
    """Write the corpus; return what ingest must report."""
    good = list(sessions(40, seed=11))
    bad_base = list(sessions(12, seed=12))
    # Secrets inside good records: they are kept, redacted.
    good[0]["messages"][1]["content"] += f" my key is {AWS_KEY}"
    good[1]["patch"] += f"# token {GH_TOKEN}\n"
    good[2]["messages"][3]["content"] = f"cat id_rsa\n{PEM}\n"
    good[3]["messages"][1]["content"] = f"curl -H 'Authorization: Bearer {BEARER}' https://api.example.com"
    good[4]["task"]["environment"] = f"https://deploy:{URL_PASSWORD}@git.example.com/acme/payments.git"
    good[5]["task"]["problem_statement"] += f" reported by {EMAIL}"
    good[6]["client"] = {"api_key": API_KEY, "region": "eu"}  # an unknown field named like a secret
    noted = dict(next(sessions(1, seed=14)), note=f"key {AWS_KEY_ESCAPED}")
    escaped = json.dumps(noted).replace(AWS_KEY_ESCAPED, "\\u0041" + AWS_KEY_ESCAPED[1:])  # a good record
    parse_lines = [
        b'{"schema_version": 1, "session_id": "cut-off", "timestamp": "2026-11',  # truncated JSON
        b"[1, 2, 3]",  # a JSON value that is not an object
        b'"a string"',
        b'{"content": "caf\xe9 latin-1, not UTF-8"}',  # invalid UTF-8
        b'{"usage": {"latency_ms": NaN}}',  # NaN is not JSON
        b'{"content": "\\udc00 lone surrogate"}',  # not Unicode text
        f'{{"leaked": "{AWS_KEY_IN_BROKEN_LINE}", '.encode(),  # broken JSON carrying a secret
    ]
    schema_lines = [
        line(changed(bad_base[0], "usage", delete=True)),  # missing field
        line(changed(bad_base[1], "outcome.tests_passed", "3")),  # ill-typed
        line(changed(bad_base[2], "usage.prompt_tokens", -5)),  # out of range
        line(changed(bad_base[3], "outcome.status", "won")),  # unknown enum
        line(changed(bad_base[4], "schema_version", 2)),  # unknown schema_version
        line(changed(bad_base[5], "timestamp", "2026-11-29T14:03:11")),  # no time zone
        line(changed(bad_base[6], "timestamp", "2026-02-30T10:00:00Z")),  # not a date
        line(changed(bad_base[7], "session_id", "")),  # empty id
        line(changed(changed(bad_base[8], "task.problem_statement", f"ask {EMAIL_IN_BAD_RECORD}"), "patch", None)),
        line(
            changed(good[10], "outcome.feedback", "edited" if good[10]["outcome"]["feedback"] != "edited" else "none")
        ),  # a known session_id with different content
        b'{"unrelated": "object"}\n',
    ]
    huge = json.dumps({"session_id": "huge", "content": GH_TOKEN_IN_HUGE_LINE + " " + "x" * (1 << 20)}) + "\n"
    too_large_lines = [huge.encode(), b'{"blob": "' + b"y" * ((1 << 20) + 1) + b'"}\n']
    skipped_lines = [b"\n", b"   \n", b"{}\n", b"\r\n"]
    resends = [line(good[0]), line(good[11]), line(good[12])]

    day = folder / "agent-logs" / "dt=2026-11-29"
    day.mkdir(parents=True)
    part0 = (
        b"".join(line(r) for r in good[:25])
        + escaped.encode()
        + b"\n"
        + b"\n".join(parse_lines)
        + b"\n"
        + b"".join(schema_lines)
        + b"".join(too_large_lines)
        + b"".join(skipped_lines)
        + resends[0]
    )
    (day / "part-0000.jsonl.gz").write_bytes(gzip.compress(part0, mtime=0))
    (day / "part-0001.jsonl").write_bytes(b"".join(line(r) for r in good[25:]) + b"".join(resends[1:]))
    corrupt_records = list(sessions(400, seed=13))
    whole = gzip.compress(encode(corrupt_records), mtime=0)
    cut = whole[: len(whole) // 2]
    (day / "part-0002.jsonl.gz").write_bytes(cut)  # truncated upload
    (day / "part-0003.jsonl").write_bytes(b"")  # empty object
    (day / "_SUCCESS").write_bytes(b"")
    (folder / "agent-logs" / "README.txt").write_text("not a log")
    decoded = zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(cut)
    kept = decoded.count(b"\n")  # complete lines before the cut
    return {
        "records": len(good) + 1 + kept,
        "duplicates": len(resends),
        "objects_read": 2,
        "objects_skipped": 3,
        "quarantined": dict.fromkeys(REASONS, 0)
        | {"parse": len(parse_lines), "schema": len(schema_lines), "too_large": len(too_large_lines)},
        "corrupt_kept": kept,
        "skipped_lines": len(skipped_lines),
    }


def rendered(path: Path) -> str:
    """A file's content as text a grep can search: Parquet decoded, gzip inflated, anything else as bytes."""
    data = path.read_bytes()
    if path.suffix == ".parquet":
        return json.dumps(pq.read_table(path).to_pylist(), default=str)
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("latin-1")


def test_every_defect_lands_in_its_reason_and_no_secret_survives(cfg, tmp_path, caplog):
    logs = tmp_path / "logs"
    expected = build_corpus(logs)
    caplog.set_level(logging.DEBUG, logger="postgame")

    summary = run_ingest(str(logs), cfg=cfg)

    assert summary.quarantined == expected["quarantined"]
    assert summary.records_ingested == expected["records"]
    assert summary.duplicates == expected["duplicates"]
    assert (summary.objects_read, summary.objects_skipped) == (expected["objects_read"], expected["objects_skipped"])
    [corrupt] = summary.corrupt_objects
    assert corrupt.key.endswith("part-0002.jsonl.gz") and corrupt.records_kept == expected["corrupt_kept"] > 0

    # every quarantined line is traceable: object key, line number, reason, a detail a person can act on
    entries = [e for _, e in quarantine_entries(cfg=cfg)]
    assert len(entries) == sum(expected["quarantined"].values())
    assert all(
        e.object_key.startswith("agent-logs/dt=2026-11-29/part-000") and e.line > 0 and e.detail for e in entries
    )
    assert any("already ingested with different content" in e.detail for e in entries)

    # nothing good lost: the good records are all in the snapshot, secrets replaced by typed placeholders
    table = load_snapshot(summary.snapshot_id, cfg=cfg)
    text = json.dumps(table.to_pylist())
    for kind in ("aws_key", "github_token", "private_key", "bearer_token", "url_password", "email", "secret"):
        assert f"<REDACTED:{kind}>" in text, kind

    # validate: ~8% of lines quarantined is above a 5% critical bound; Data Docs are written either way
    strict = cfg.validate_.model_copy(update={"quarantine_rate_max": 0.05})
    with pytest.raises(DataValidationError) as failure:
        from postgame.validate import validate_snapshot

        validate_snapshot(summary.snapshot_id, cfg=cfg.model_copy(update={"validate_": strict}))
    assert "batch.expect_column_values_to_be_between(quarantine_rate)" in failure.value.failed
    from postgame.validate import report_markdown

    printed = [summary.model_dump_json(), report_markdown(failure.value.report), str(failure.value), caplog.text] + [
        e.model_dump_json() for e in entries
    ]
    files = [p for p in cfg.home.rglob("*") if p.is_file()]
    assert any(p.name == "index.html" for p in files) and any(p.suffix == ".parquet" for p in files)
    leaks = [(secret, str(p)) for p in files for secret in SECRETS if secret in rendered(p)]
    leaks += [(secret, "printed output") for text in printed for secret in SECRETS if secret in text]
    assert not leaks
