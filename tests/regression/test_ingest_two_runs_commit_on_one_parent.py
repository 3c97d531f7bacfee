"""Two ingests of one store running at once both read the same new objects; if both committed, every record would be
stored twice. The second to finish must find the head moved and refuse to commit (a transient error: re-run)."""

from __future__ import annotations

import pytest

from postgame.contract.synthetic import encode, sessions
from postgame.ingest import is_transient_s3_error
from postgame.ingest import snapshot as snap
from postgame.ingest.errors import StoreError
from postgame.ingest.pipeline import ingest
from postgame.store import LocalStore


class RacingSource(LocalStore):
    """A source whose first read lets another ingest run to completion first."""

    def __init__(self, root, other):
        super().__init__(root)
        self.other = other

    def open(self, key):
        if self.other:
            other, self.other = self.other, None
            other()
        return super().open(key)


def test_the_later_of_two_concurrent_runs_does_not_commit(cfg, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "part-0000.jsonl").write_bytes(encode(sessions(30, seed=51)))
    state = LocalStore(cfg.home / "store")

    def run(source):
        return ingest(source, "", state=state, settings=cfg.ingest, workdir=cfg.home / "tmp", source_uri=str(logs))

    with pytest.raises(StoreError) as err:
        run(RacingSource(logs, lambda: run(LocalStore(logs))))
    assert is_transient_s3_error(err.value)
    [only] = snap.manifests(state, cfg.ingest.state_prefix)
    assert only.counts.records_ingested == 30
