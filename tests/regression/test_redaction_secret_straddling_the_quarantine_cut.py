"""A quarantined line is kept cut to `quarantine_text_bytes`. Redacting after the cut left the part of a secret
before it in clear (an AWS key cut to AKIA + 10 characters no longer matches its pattern). Redaction happens on
more than what is kept."""

from __future__ import annotations

from postgame.ingest.lines import parse_line
from postgame.ingest.reader import TooLarge

KEY = "AKIAQ4EXAMPLE7STRADL"


def test_secret_across_the_cut_of_a_broken_line():
    text_chars = 1000
    line = ("{" + "x" * (text_chars - 10) + KEY + " and more broken json").encode()
    result = parse_line(line, text_chars=text_chars)
    assert result.reason == "parse" and result.truncated
    assert "AKIAQ4EXA" not in result.text and "AKIA" not in result.text


def test_secret_across_the_cut_of_a_too_large_line():
    head = ('{"content": "' + "y" * 990 + KEY + '"').encode()
    result = parse_line(TooLarge(head=head, size=5 << 20), text_chars=1000, max_line_bytes=1 << 20)
    assert result.reason == "too_large" and "AKIA" not in result.text
