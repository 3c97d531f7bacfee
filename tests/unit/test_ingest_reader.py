"""Streaming lines out of one object: chunk boundaries, the line cap, gzip members and damaged gzip."""

from __future__ import annotations

import gzip
import io

import pytest

from postgame.ingest.reader import CorruptObject, TooLarge, read_lines


def lines(data: bytes, max_line: int = 100, chunk: int = 4096) -> list:
    return list(read_lines(io.BytesIO(data), max_line_bytes=max_line, head_bytes=5, chunk_bytes=chunk))


@pytest.mark.parametrize("chunk", [4096, 4099, 1 << 20])
def test_lines_survive_any_chunk_boundary(chunk):
    data = b"".join(b"line-%05d\n" % i for i in range(3000))
    got = lines(data, chunk=chunk)
    assert [n for n, _ in got] == list(range(1, 3001))
    assert got[-1][1] == b"line-02999"


def test_blank_lines_count_and_a_last_line_without_newline_is_kept():
    assert lines(b"a\n\nb\r\nc") == [(1, b"a"), (2, b""), (3, b"b\r"), (4, b"c")]


def test_a_line_over_the_cap_becomes_too_large_with_its_size_and_head():
    big = b"x" * 10_000
    got = lines(b"ok\n" + big + b"\nok2\n", max_line=5000)
    assert got[0] == (1, b"ok")
    assert got[1] == (2, TooLarge(head=b"xxxxx", size=10_000))
    assert got[2] == (3, b"ok2")


def test_a_line_exactly_at_the_cap_is_kept():
    assert lines(b"y" * 100 + b"\n", max_line=100) == [(1, b"y" * 100)]


def test_gzip_is_recognised_by_its_bytes_and_members_are_concatenated():
    data = gzip.compress(b"a\nb\n") + gzip.compress(b"c\n")
    assert lines(data) == [(1, b"a"), (2, b"b"), (3, b"c")]


def test_truncated_gzip_yields_the_good_lines_then_raises():
    data = gzip.compress(b"".join(b"row %d\n" % i for i in range(50_000)), mtime=0)
    got = []
    with pytest.raises(CorruptObject, match="truncated"):
        for item in read_lines(io.BytesIO(data[: len(data) // 2]), max_line_bytes=100, chunk_bytes=4096):
            got.append(item)
    assert 0 < len(got) < 50_000
    assert got == [(i + 1, b"row %d" % i) for i in range(len(got))]  # whole lines only, in order


def test_damaged_gzip_raises_corrupt():
    data = bytearray(gzip.compress(b"a\n" * 1000))
    data[20:40] = b"\xff" * 20
    with pytest.raises(CorruptObject):
        lines(bytes(data))
