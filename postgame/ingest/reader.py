"""Streaming lines out of one log object: plain or gzip JSON Lines, a line-length cap, corrupt gzip detected.

    for number, line in read_lines(stream, max_line_bytes=1 << 20):
        ...   # line: bytes without its newline, or TooLarge(head, size)

Memory is bounded by one chunk plus one line (at most max_line_bytes): a corpus of any size streams through. Gzip is
recognised by its magic bytes (whatever the name says); concatenated gzip members are read in turn. A truncated or
damaged gzip stream raises `CorruptObject` after every line decoded before the damage has been yielded. Errors of the
transport (a dropped connection) are not caught here: they are not the object's fault.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

GZIP_MAGIC = b"\x1f\x8b"


class CorruptObject(Exception):
    """The object's bytes cannot be decoded to the end (truncated or damaged compression)."""


@dataclass(frozen=True)
class TooLarge:
    head: bytes  # the first bytes of the line, for a person to recognise it
    size: int  # bytes of the whole line


def _chunks(stream: BinaryIO, chunk_bytes: int) -> Iterator[bytes]:
    while True:
        data = stream.read(chunk_bytes)
        if not data:
            return
        yield data


def _gunzip(chunks: Iterator[bytes], chunk_bytes: int) -> Iterator[bytes]:
    decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
    in_member = False
    for data in chunks:
        while data:
            in_member = True
            try:
                out = decoder.decompress(data, chunk_bytes)  # bounded output: a gzip bomb cannot blow up memory
            except zlib.error as exc:
                raise CorruptObject(f"damaged gzip data: {exc}") from None
            if out:
                yield out
            if decoder.eof:  # end of one member; another may follow
                data = decoder.unused_data
                decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
                in_member = False
            else:
                data = decoder.unconsumed_tail
    if in_member:
        raise CorruptObject("truncated gzip stream (it ends before the end-of-stream marker)")


def decoded_chunks(stream: BinaryIO, chunk_bytes: int = 1 << 20) -> Iterator[bytes]:
    """The object's bytes, gunzipped when they start with the gzip magic."""
    chunks = _chunks(stream, chunk_bytes)
    first = next(chunks, b"")
    if not first:
        return
    everything = itertools.chain([first], chunks)
    yield from _gunzip(everything, chunk_bytes) if first[:2] == GZIP_MAGIC else everything


def split_lines(chunks: Iterator[bytes], max_line_bytes: int,
                head_bytes: int) -> Iterator[tuple[int, bytes | TooLarge]]:
    """(line number, line) for each line of the concatenated chunks; a line longer than max_line_bytes becomes
    TooLarge keeping its first head_bytes. The newline is removed; a last line without one is still a line."""
    parts: list[bytes] = []
    size = 0
    too_large = False
    number = 0
    for chunk in chunks:
        pieces = chunk.split(b"\n")
        for i, piece in enumerate(pieces):
            if too_large:
                size += len(piece)
            else:
                parts.append(piece)
                size += len(piece)
                if size > max_line_bytes:
                    too_large = True
                    parts = [b"".join(parts)[:head_bytes]]
            if i == len(pieces) - 1:
                break  # the line goes on in the next chunk
            number += 1
            yield number, (TooLarge(parts[0], size) if too_large else b"".join(parts) if len(parts) > 1 else parts[0])
            parts, size, too_large = [], 0, False
    if size or too_large:
        number += 1
        yield number, (TooLarge(parts[0], size) if too_large else b"".join(parts))


def read_lines(stream: BinaryIO, *, max_line_bytes: int, head_bytes: int = 4096,
               chunk_bytes: int = 1 << 20) -> Iterator[tuple[int, bytes | TooLarge]]:
    """Lines of one log object; raises CorruptObject (after the good lines) when its compression is damaged."""
    return split_lines(decoded_chunks(stream, chunk_bytes), max_line_bytes, head_bytes)
