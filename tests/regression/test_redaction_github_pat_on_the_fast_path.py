"""A fine-grained GitHub token (`github_pat_...`) in an otherwise plain line was stored in clear by the parallel
ingest path. Lines the block pre-filter passes skip the redaction step, and its GitHub scan looked for
`gh` + `ithub_pat_` (= "ghithub_pat_"), so such a token alone on a line never sent the line to the exact path; the
one-process path (every line through `parse_line`) redacted it. Found by comparing the pre-filter with the guards
of `redact.rules_for` on generated lines."""

from __future__ import annotations

import json

import pytest

from postgame.contract.synthetic import sessions
from postgame.ingest.lines import parse_line
from postgame.ingest.objects import ObjectJob, parse_object
from postgame.settings.ingest import IngestSettings

TOKENS = (
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",  # fine-grained
    "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
)  # classic (was caught before)


@pytest.mark.parametrize("token", TOKENS)
def test_a_github_token_alone_on_a_line_is_redacted_by_both_paths(token):
    record = next(iter(sessions(1, seed=5)))
    record["messages"][-1]["content"] = f"use {token} to push"
    line = json.dumps(record).encode()
    settings = IngestSettings()

    part = parse_object(ObjectJob(key="logs/a.jsonl", etag="e", size=len(line), data=line + b"\n"), settings)
    stored = part.table.to_pylist()[0]["messages"][-1]["content"]
    exact = parse_line(line, text_chars=settings.quarantine_text_bytes).record["messages"][-1]["content"]

    assert stored == exact == "use <REDACTED:github_token> to push"
