"""Which bucket a starting SeaweedFS is probed in: the one postgame's store keeps on it, and none when the store is
elsewhere (a probe there would create a bucket, a collection of volumes, that nothing uses)."""

from __future__ import annotations

import pytest

from infra.stack import _stack_bucket
from postgame.runtime import EMBEDDED_BUCKET
from tests.support import make_config

LOCAL = "http://127.0.0.1:9000"


@pytest.mark.parametrize(
    ("uri", "endpoint", "bucket"),
    [
        ("", "", EMBEDDED_BUCKET),  # the embedded default: s3://postgame on the stack
        ("s3://state/some/prefix", "", "state"),
        ("S3://state", "", "state"),
        ("s3://state", LOCAL + "/", "state"),  # the stack's own endpoint, spelled out
        ("s3://state", "https://s3.eu-west-1.amazonaws.com", None),  # another S3
        ("/data/store", "", None),  # a folder
        ("s3://", "", None),
    ],
)
def test_the_probe_goes_to_the_stores_bucket_on_this_seaweedfs_or_nowhere(tmp_path, uri, endpoint, bucket):
    cfg = make_config(tmp_path, store={"uri": uri, "endpoint_url": endpoint})
    assert _stack_bucket(cfg, LOCAL) == bucket
