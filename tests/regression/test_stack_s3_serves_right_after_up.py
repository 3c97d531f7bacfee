"""`postgame up` returned while SeaweedFS answered `/healthz` but not yet objects: a GetObject of a log written
before the restart failed with InternalError (503) right after `up`, and a command run straight after it crashed.
Seen in session 12's demo. `up` now counts the S3 service up only once a probe object round-trips through it.

Against the real SeaweedFS of the stack (its own home, so the restarts touch no other test's server).
"""

from __future__ import annotations

import uuid

import pytest

from infra import stack
from postgame.errors import StackError
from tests.support import SeaweedServer, make_config, put_in_a_new_bucket

pytestmark = pytest.mark.services


def test_objects_written_before_a_restart_are_served_as_soon_as_up_returns(server):
    """Three buckets (collections: SeaweedFS grows 7 volumes for each), restarted three times.
    Without the probe a read right after `up` failed on 1 restart in 4 here (2026-12-03, loops of restarts with 4
    and 8 buckets: 1 of 4, 1 of 3) and this test failed 1 run of 2; with it, 0 of 8 restarts and no run failed.
    A race: the test catches its return with good odds, not every time."""
    buckets = [f"logs-{n}-{uuid.uuid4().hex[:6]}" for n in range(3)]
    objects = {
        (bucket, f"agent-logs/part-{i:04d}.jsonl"): f"record {i}\n".encode() * 100
        for bucket in buckets
        for i in range(3)
    }
    for (bucket, key), data in objects.items():
        put_in_a_new_bucket(server.store(bucket), key, data)
    for _ in range(3):
        server.stop()
        server.start()
        stores = {bucket: server.store(bucket) for bucket, _ in objects}  # fresh clients, as the next command's
        assert {(bucket, key): stores[bucket].get(key) for bucket, key in objects} == objects
    ours = server.store()  # the bucket of the stack's store, which the probes wrote to
    assert ours.client.head_bucket(Bucket=ours.bucket) and not list(ours.list(stack.S3_PROBE_PREFIX))  # cleaned up


def test_up_waits_for_the_probe_and_names_why_it_gave_up(tmp_path, monkeypatch):
    """The start loop asks the probe, not only `/healthz`: a store that never serves objects is not up, and the
    error says what the probe met."""
    (tmp_path / "home").mkdir()
    server = SeaweedServer(make_config(tmp_path / "home", stack={"start_timeout_s": 8}))
    monkeypatch.setattr(stack, "s3_probe", lambda cfg, endpoint: "InternalError")
    with pytest.raises(StackError, match=r"s3 \(InternalError\) not healthy after 8s"):
        server.start()
    assert not stack.running_stack(server.cfg)  # and nothing was left running
