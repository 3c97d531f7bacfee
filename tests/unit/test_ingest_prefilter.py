"""The block pre-filter (`postgame.ingest.prefilter`): every line on which a redaction guard could fire, or that
holds a run of 16+ digits, goes to the exact path; plain lines do not (they would only cost time)."""

from __future__ import annotations

import random
import re

import numpy as np

from postgame.ingest.prefilter import needs_slow_path
from postgame.ingest.redact import rules_for

ATOMS = [
    b"@",
    b"@@",
    b"a@b",
    b"\\n@",
    b"\\\\n@",
    b"x\\n@",
    b"\\t@-",
    b"/@",
    b" @x",
    "é@é".encode(),
    b".@-",
    b"%@",
    b"+@Z",
    b"\\u0041",
    b"\\\\u",
    b"PRIVATE KEY",
    b"PRIVATE  KEY",
    b"AKIA",
    b"ASIA",
    b"AKI",
    b"ghp_",
    b"gho_",
    b"github_pat_",
    b"ghx_",
    b"secret",
    b"SeCrEt",
    b"SECRE",
    b"bearer",
    b"BEARER",
    b"bear",
    b"0123456789012345",
    b"012345678901234",
    b"12345678",
    b"1234567",
    b"9",
    b"abc",
    b" ",
    b'"',
    b"{",
    b"}",
    b"x",
    "€".encode(),
    b"\\",
    b"n",
    b"t",
    b"r",
]


def _block(lines: list[bytes]) -> tuple[bytes, list[int]]:
    starts, offset = [], 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    return b"\n".join(lines), starts


def _must_flag(line: bytes) -> bool:
    return bool(rules_for(line.decode("utf-8"))) or re.search(rb"[0-9]{16}", line) is not None


def test_every_line_a_guard_could_fire_on_is_flagged():
    rng = random.Random(0)
    lines = [b"".join(rng.choice(ATOMS) for _ in range(rng.randint(0, 10))) for _ in range(20_000)]
    slow = needs_slow_path(*_block(lines))
    missed = [line for line, flagged in zip(lines, slow, strict=True) if _must_flag(line) and not flagged]
    assert missed == []
    assert 0 < slow.sum() < len(lines)  # the generator makes both kinds


def test_digit_runs_are_flagged_from_16_digits_at_every_alignment():
    lines, expected = [], []
    for lead in range(9):  # where the run starts relative to the 8-byte words of the block
        for length in (8, 15, 16, 17, 24):
            lines.append(b"x" * lead + b"7" * length + b" y")
            expected.append(length >= 16)
    lines.append(b"1" * 16)  # the block's last bytes
    expected.append(True)
    assert needs_slow_path(*_block(lines)).tolist() == expected


def test_plain_lines_are_not_flagged():
    lines = [
        b'{"patch": "\\n@@ -1,2 +1,2 @@\\n-a\\n+b", "n": 123456789012345, "t": "2026-12-01T03:00:00Z"}',
        b'{"content": "def f(x):\\n    return x  # nothing to hide here"}',
        b"",
    ]
    assert needs_slow_path(*_block(lines)).tolist() == [False, False, False]
    assert needs_slow_path(b"", []).shape == (0,)


def test_the_flags_are_per_line():
    lines = [b"plain", b"my SECRET", b"plain", b"AKIAABCDEFGHIJKLMNOP", b"plain"]
    assert np.flatnonzero(needs_slow_path(*_block(lines))).tolist() == [1, 3]
