"""Stored text that today's redaction would change: a check of committed snapshots against `redact`.

    unredacted(table)                       # -> [Finding(row, field, kinds, object_key, line)] for snapshot rows
    audit_snapshot("latest", cfg=cfg)       # the same for a committed snapshot, row group by row group
    clean("messages.content", text)         # the string as today's ingest would store it (the test and the fix)
    .venv/bin/python scripts/audit_redaction.py [--config FILE] [--snapshot ID ...] [--json]

Redaction happens once, at ingest; a bug in it leaves secrets in snapshots that are immutable (their ids are content
hashes). Until 5e3908b the parallel ingest path stored a fine-grained GitHub token (`github_pat_...`) in clear when
nothing else on its line made the pre-filter send it to redaction. This finds such leftovers, whatever rule missed
them: every string of every record (nested fields, messages, the `extra` JSON with its secret-named keys) is put
through `redact` again, and any string that changes is a finding. Cheap RE2 scans pick the strings worth the Python
pass (any rule's guard is a superset of its pattern). It changes nothing: `postgame redact`
(`postgame.ingest.remediate`) writes the cleaned successor, through the same `clean`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from postgame.contract.arrow import EXTRA, SOURCE_KEY, SOURCE_LINE
from postgame.ingest.prefilter import CASELESS, LITERAL_LED
from postgame.ingest.redact import RULES, placeholder, redact_json_text, redact_text, redact_value
from postgame.ingest.snapshot import QuarantineEntry

# A string that no rule's pattern can match holds none of these: the ingest pre-filter's literal-led and caseless
# scans (the PEM, AWS, GitHub, secret and bearer rules), and an `@` after a character that may end a user name or
# password (url_password, email; the `@@` of patch hunks is not one).
_GUARDS = (*LITERAL_LED, *(f"(?i){needle}" for needle in CASELESS), "[^ \t\n/@]@")
ARGUMENTS = "messages.tool_calls.function.arguments"  # a JSON text: redacted as JSON, so that it stays one


@dataclass(frozen=True)
class Finding:
    row: int
    field: str  # e.g. messages.content, task.problem_statement, extra
    kinds: tuple[str, ...]  # the placeholders redaction would write (aws_key, github_token, ...)
    object_key: str = ""
    line: int = 0


def _leaves(array: pa.Array, rows: np.ndarray, path: str) -> Iterator[tuple[str, pa.Array, np.ndarray]]:
    """(field path, string values, row of each value) for every string leaf under `array`."""
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        yield path, array, rows
    elif pa.types.is_struct(array.type):
        for i in range(array.type.num_fields):
            name = array.type.field(i).name
            yield from _leaves(array.field(i), rows, f"{path}.{name}" if path else name)
    elif pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        parents = pc.list_parent_indices(array).to_numpy(zero_copy_only=False)
        yield from _leaves(pc.list_flatten(array), rows[parents], path)


def _kinds(before: str, after: str) -> tuple[str, ...]:
    """The placeholders redaction wrote: the rules' kinds, and `secret` for a secret-named unknown field."""
    return tuple(
        kind
        for kind in (*(rule.kind for rule in RULES), "secret")
        if placeholder(kind) in after and placeholder(kind) not in before
    )


def clean(field: str, text: str) -> str:
    """A stored string of `field` (a path as `Finding.field` names it) as today's ingest would store it: the `extra`
    JSON with its secret-named keys redacted (sorted keys, no ASCII escapes), tool-call arguments redacted as JSON,
    any other text by every rule. Unchanged when there is nothing to redact (redaction is idempotent)."""
    if field == EXTRA:
        return json.dumps(redact_value(json.loads(text), RULES, secret_keys=True), ensure_ascii=False, sort_keys=True)
    if field == ARGUMENTS:
        return redact_json_text(text)
    return redact_text(text)


def unredacted(table: pa.Table) -> list[Finding]:
    """Every (row, field) of `table` (snapshot rows) whose text redaction would change today."""
    rows = np.arange(table.num_rows)
    keys = table.column(SOURCE_KEY).to_pylist() if SOURCE_KEY in table.column_names else None
    lines = table.column(SOURCE_LINE).to_pylist() if SOURCE_LINE in table.column_names else None
    found: list[Finding] = []
    for name in table.column_names:
        if name in (SOURCE_KEY, SOURCE_LINE):
            continue
        column = table.column(name).combine_chunks()
        for path, strings, at in _leaves(column, rows, name):
            maybe = np.zeros(len(strings), bool)
            for guard in _GUARDS:
                maybe |= pc.fill_null(pc.match_substring_regex(strings, guard), False).to_numpy(zero_copy_only=False)
            if name == EXTRA:  # unknown fields: a secret-named key is redacted whatever its value
                maybe |= pc.is_valid(strings).to_numpy(zero_copy_only=False)
            for i in np.flatnonzero(maybe):
                text = strings[int(i)].as_py()
                if name == EXTRA:  # compared as ingest writes it: sorted keys, no ASCII escapes
                    text = json.dumps(json.loads(text), ensure_ascii=False, sort_keys=True)
                cleaned = clean(path, text)
                if cleaned != text:
                    row = int(at[i])
                    found.append(
                        Finding(
                            row=row,
                            field=path,
                            kinds=_kinds(text, cleaned),
                            object_key=keys[row] if keys else "",
                            line=lines[row] if lines else 0,
                        )
                    )
    return sorted(found, key=lambda f: (f.row, f.field))


def unredacted_quarantine(entries: Iterable[QuarantineEntry]) -> list[Finding]:
    """Every quarantine entry (`row` = its index) whose text or detail redaction would change today."""
    found = []
    for entry in entries:
        for field, text in (("quarantine.text", entry.text), ("quarantine.detail", entry.detail)):
            cleaned = redact_text(text)
            if cleaned != text:
                found.append(Finding(entry.index, field, _kinds(text, cleaned), entry.object_key, entry.line))
    return found


def audit_snapshot(snapshot_id: str, *, cfg) -> list[Finding]:
    """`unredacted` over a committed snapshot, one row group at a time (rows numbered across the file), then
    `unredacted_quarantine` over its quarantine."""
    import pyarrow.parquet as pq

    from postgame.ingest.catalog import quarantine_entries, snapshot_file

    parquet = pq.ParquetFile(snapshot_file(snapshot_id, cfg=cfg))
    found, offset = [], 0
    for group in range(parquet.num_row_groups):
        table = parquet.read_row_group(group)
        found += [
            Finding(row=f.row + offset, field=f.field, kinds=f.kinds, object_key=f.object_key, line=f.line)
            for f in unredacted(table)
        ]
        offset += table.num_rows
    return found + unredacted_quarantine(e for _, e in quarantine_entries(cfg=cfg, snapshot_id=snapshot_id))
