"""Which lines of a block need the exact (slow) path: one pass of compiled scans over the whole block, no per-line
Python regex.

    slow = needs_slow_path(block, starts)   # block = lines joined by b"\\n"; starts[i] = offset of line i

A line is sent to the exact path (`postgame.ingest.lines.parse_line`) when any redaction guard *could* fire on it
(`redact.rules_for` would return a rule), or when the fast JSON parser could read it differently from `json`:
- a `\\u` escape (could spell anything: every rule applies), `PRIVATE KEY`, an AWS key prefix, `secret` / `bearer`
  in any case, a GitHub token prefix, an `@` that `_userinfo_like` or `_address_like` could accept;
- a run of 16+ digits (orjson reads integers beyond 64 bits as floats, `json` as ints; Arrow reads an integer in a
  number field as a float, which is the exact value only below 2**53, about 9e15).
Every test here is a superset of the guard it stands for (a flagged line that turns out clean costs only time), so
a line left unflagged is one on which `rules_for` returns no rule: the redaction is exactly today's. The scans are
bytes.find / numpy over the block (C speed); only flagged lines cost Python work.
"""

from __future__ import annotations

import re
from bisect import bisect_right

import numpy as np

_NEEDLES = (b"\\u", b"PRIVATE KEY")
# One scan each, keyed on a literal first byte the regex engine skips to: the AWS key prefixes, the GitHub prefixes.
_PATTERNS = (re.compile(rb"A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA)"),
             re.compile(rb"gh(?:[pousr]_|ithub_pat_)"))
_LOWER_NEEDLES = (b"secret", b"bearer")
_LONG_NUMBER = 16  # digits in a row


def _mark(block: bytes, starts: list[int], needle: bytes, slow: np.ndarray) -> None:
    """Flag each line holding `needle`; after a hit, jump to the next line (one find per flagged line)."""
    at = block.find(needle)
    while at != -1:
        line = bisect_right(starts, at) - 1
        slow[line] = True
        nxt = starts[line + 1] if line + 1 < len(starts) else len(block)
        at = block.find(needle, nxt)


def _mark_pattern(block: bytes, starts: list[int], pattern: re.Pattern, slow: np.ndarray) -> None:
    found = pattern.search(block)
    while found is not None:
        line = bisect_right(starts, found.start()) - 1
        slow[line] = True
        found = pattern.search(block, starts[line + 1] if line + 1 < len(starts) else len(block))


def _alnum(chars: np.ndarray) -> np.ndarray:
    """ASCII letters and digits, and every non-ASCII byte (a superset of str.isalnum on the decoded text)."""
    return ((chars >= 48) & (chars <= 57)) | (((chars | 32) >= 97) & ((chars | 32) <= 122)) | (chars >= 128)


def _at_signs(block: bytes) -> np.ndarray:
    """Offsets of `@` signs that `_userinfo_like` or `_address_like` could accept (a superset of both)."""
    arr = np.frombuffer(block, np.uint8)
    at = np.flatnonzero(arr == 64)
    if not len(at):
        return at
    padded = np.concatenate([np.zeros(3, np.uint8), arr, np.zeros(1, np.uint8)])  # arr[i] == padded[i + 3]
    before, before2, before3, after = padded[at + 2], padded[at + 1], padded[at], padded[at + 4]
    # _userinfo_like: the char before is not one of " \t\n/@" and the `@` does not follow a one-backslash escape
    escaped = np.isin(before, np.frombuffer(b"ntr", np.uint8)) & (before2 == 92) & (before3 != 92)
    userinfo = ~np.isin(before, np.frombuffer(b" \t\n/@", np.uint8)) & ~escaped & (at > 0)
    # _address_like: an address character on both sides (any non-ASCII byte counts: str.isalnum is Unicode-aware)
    word = np.frombuffer(b"._%+-", np.uint8)
    address = ((_alnum(before) | np.isin(before, word)) & (_alnum(after) | (after == 45)))
    return at[userinfo | address]


def _mark_long_numbers(block: bytes, starts: list[int], slow: np.ndarray) -> None:
    """Flag each line holding a run of `_LONG_NUMBER` or more ASCII digits (numpy over the block)."""
    chars = np.frombuffer(block, np.uint8)
    digit = ((chars >= 48) & (chars <= 57)).view(np.int8)
    edge = np.zeros(1, np.int8)
    edges = np.flatnonzero(np.diff(np.concatenate([edge, digit, edge])))  # a run's start, its end, the next start...
    runs = edges[::2][(edges[1::2] - edges[::2]) >= _LONG_NUMBER]
    if len(runs):
        slow[np.searchsorted(np.asarray(starts), runs, side="right") - 1] = True


def needs_slow_path(block: bytes, starts: list[int]) -> np.ndarray:
    """A bool per line: True where the exact path must decide (see the module docstring)."""
    slow = np.zeros(len(starts), bool)
    for needle in _NEEDLES:
        _mark(block, starts, needle, slow)
    for pattern in _PATTERNS:
        _mark_pattern(block, starts, pattern, slow)
    low = block.lower()  # ASCII only, which is all `secret` / `bearer` need
    for needle in _LOWER_NEEDLES:
        _mark(low, starts, needle, slow)
    _mark_long_numbers(block, starts, slow)
    ats = _at_signs(block)
    if len(ats):
        slow[np.searchsorted(np.asarray(starts), ats, side="right") - 1] = True
    return slow
