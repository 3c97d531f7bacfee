"""Values that JSON can carry but Parquet cannot (a lone surrogate, an integer beyond int64, a float overflowing to
infinity) once crashed the whole run in the Parquet writer. They must be quarantined, and the run must go on."""

from __future__ import annotations

import json

from postgame.contract.synthetic import encode, sessions
from postgame.ingest import load_snapshot, run_ingest
from postgame.ingest.lines import REASONS


def test_unwritable_values_are_quarantined_not_fatal(cfg, tmp_path):
    base = json.dumps(next(sessions(1, seed=41)))
    record = json.loads(base)
    lines = [
        base.replace(record["patch"][:10].replace("\n", "\\n"), "\\ud800 lone"),  # lone surrogate in the patch
        base.replace(f'"prompt_tokens": {record["usage"]["prompt_tokens"]}', '"prompt_tokens": 9223372036854775808'),
        base.replace(f'"cost_usd": {record["usage"]["cost_usd"]}', '"cost_usd": 1e999'),
    ]
    assert all(line != base for line in lines)
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "part-0000.jsonl").write_bytes("\n".join(lines).encode() + b"\n" + encode(sessions(5, seed=42)))
    summary = run_ingest(str(folder), cfg=cfg)
    assert summary.quarantined == dict.fromkeys(REASONS, 0) | {"parse": 1, "schema": 2}
    assert summary.records_ingested == 5
    assert load_snapshot(summary.snapshot_id, cfg=cfg).num_rows == 5
