"""A team's stack holds more buckets than a demo's: each SeaweedFS bucket is a collection that grows 7 volumes, and
the stack's volume server allowed 50 (`-volume.max=50`), so writes to the eighth bucket failed ("No free volumes
left", an InternalError to S3 clients). The cap is now 1,000 (`-volume.max=1000`): a volume is a sparse file until
written, so a slot costs no disk (`-volume.max=0`, slots from the free disk, would give a nearly full laptop fewer
buckets than 50 did).

Against the real SeaweedFS of the stack, in a home of its own.
"""

from __future__ import annotations

import uuid

import pytest

from tests.support import put_in_a_new_bucket

pytestmark = pytest.mark.services


def test_twelve_buckets_each_take_and_serve_their_objects(server):
    buckets = [f"team-{n}-{uuid.uuid4().hex[:6]}" for n in range(12)]
    for bucket in buckets:
        put_in_a_new_bucket(server.store(bucket), "logs/part-0000.jsonl", bucket.encode())
    assert {b: server.store(b).get("logs/part-0000.jsonl") for b in buckets} == {b: b.encode() for b in buckets}
