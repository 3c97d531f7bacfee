"""One log object parsed: the unit of work ingest fans out (one task per object, see `postgame.runners`).

    part = parse_object(ObjectJob(key, etag, size, data), settings)   # -> ParsedObject (picklable, Arrow inside)

Everything that depends only on the line is done here, in a worker: gunzip, line split, JSON, the contract check,
redaction, the line digest and the Arrow rows. What depends on other objects (dedupe by session_id, the quarantine
index, row groups, the manifest) stays with the one process that commits (`postgame.ingest.pipeline`), so the
snapshot is byte for byte the one the one-process path writes.

Per segment of lines (a few MB), three paths with one result:
- bulk: the lines the pre-filter passes that look like one JSON object each (valid UTF-8, `{...}`, shallow, no
  `"tool_call`: a version 2 trajectory, which the version 1 columns read in bulk could only refuse) are read
  by Arrow's JSON reader in one call, with the contract's schema and unknown keys an error
  (`contract.arrowcheck.read_lines_strict`; a block it refuses is halved until the refused lines are found), and the
  contract is checked on the columns (`contract.arrowcheck.suspect_rows`). Each line is parsed once, in C++; rows it
  does not flag are stored as read;
- fast: the lines Arrow refused or the column check flagged: orjson, the contract check (a generated yes/no
  function, `contract.fastcheck`, then the exact one where it says no; for a version 2 record the trajectory rules
  too), no redaction (the block pre-filter proved no guard can fire), and the row built by Arrow's JSON reader from
  the line's own bytes when the record is plain (version 1, no unknown fields, no integral float converted, no integer
  in a number field);
- exact: `parse_line` (stdlib json, exact error reasons, redaction), taken for every line the pre-filter flags, every
  line orjson rejects or the contract rejects (its message and redacted text come from `parse_line`), and lines
  deep enough to hit json's recursion limit. Rows of such records are built in Python (`records_to_table`).

Rows read by Arrow are in layout 1 (`contract.arrow`); a segment with a version 2 record is upgraded to layout 2.
"""

from __future__ import annotations

import hashlib
import io
import json
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np
import orjson
import pyarrow as pa

from postgame.contract.arrow import (
    EXTRA,
    SOURCE_KEY,
    SOURCE_LINE,
    arrow_schema,
    concat,
    records_to_table,
    unknown_fields,
)
from postgame.contract.arrowcheck import contract_schema, has_key, read_lines_strict, suspect_rows
from postgame.contract.check import ContractViolation, check_record_flags
from postgame.contract.fastcheck import is_plain_valid
from postgame.contract.spec import AGENT_SESSION
from postgame.contract.trajectory import trajectory_problem
from postgame.ingest.lines import BOM, Accepted, Rejected, parse_line
from postgame.ingest.prefilter import needs_slow_path
from postgame.ingest.reader import CorruptObject, TooLarge, read_line_chunks
from postgame.ingest.redact import RULES, redact_value
from postgame.settings.ingest import IngestSettings

SEGMENT_BYTES = 8 << 20  # lines pre-filtered and turned into Arrow rows together (memory: a few segments)
_DEEP = 256  # brackets in a line beyond which json may hit its recursion limit where orjson would not


@dataclass(frozen=True)
class ObjectJob:
    """One object to parse: its identity and its bytes (read by the committing process: workers need no store)."""

    key: str
    etag: str
    size: int
    data: bytes


@dataclass
class ParsedObject:
    """What one object gave, in line order. `table` holds the accepted records (lineage set, before dedupe)."""

    key: str
    etag: str
    size: int
    lines: int = 0
    skipped_lines: int = 0
    corrupt: str | None = None  # CorruptObject detail: the object ends in damaged compression
    rejected: list[tuple[int, int, Rejected]] = field(default_factory=list)  # (line number, line bytes, verdict)
    numbers: list[int] = field(default_factory=list)  # line number of each accepted record
    session_ids: list[str] = field(default_factory=list)
    digests: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)  # bytes of each accepted line (row-group accounting)
    tables: list[pa.Table] = field(default_factory=list)

    @property
    def table(self) -> pa.Table:
        return concat(self.tables) if self.tables else arrow_schema().empty_table()


_NUMBER_FIELDS = tuple(
    (parent.name, sub.name)
    for parent in AGENT_SESSION.fields
    if parent.kind == "object"
    for sub in parent.fields
    if sub.kind == "number"
)


def _plain_numbers(record: dict) -> bool:
    """True when every contract number is a float: an int there is written by Python's rules (Arrow's may differ)."""
    for a, b in _NUMBER_FIELDS:
        if type(record[a][b]) is not float:
            return False
    return True


def _with_lineage(table: pa.Table, key: str, numbers: list[int]) -> pa.Table:
    n = table.num_rows
    return (
        table.append_column(_SCHEMA.field(EXTRA), pa.nulls(n, pa.string()))
        .append_column(_SCHEMA.field(SOURCE_KEY), pa.array([key] * n, pa.string()))
        .append_column(_SCHEMA.field(SOURCE_LINE), pa.array(numbers, pa.int64()))
    )


_BULK, _PLAIN, _ROW = 0, 1, 2  # where an accepted line's row comes from


class _Segment:
    """Accepted lines of one segment: rows already read by Arrow (bulk), plain lines as raw bytes for Arrow, and the
    others as checked Python rows; `table()` puts them back in line order."""

    def __init__(self, key: str, bulk: pa.Table | None = None):
        self.key = key
        self.order: list[int] = []  # per accepted line: _BULK, _PLAIN or _ROW
        self.bulk = bulk  # the bulk rows (contract columns), in line order, every one of them accepted
        self.bulk_numbers: list[int] = []
        self.plain: list[bytes] = []
        self.plain_rows: list[dict] = []  # the same records parsed, in case Arrow refuses the block
        self.plain_numbers: list[int] = []
        self.rows: list[dict] = []

    def add_bulk(self, number: int) -> None:
        self.order.append(_BULK)
        self.bulk_numbers.append(number)

    def add_bulk_all(self, numbers: list[int]) -> None:
        self.order += [_BULK] * len(numbers)
        self.bulk_numbers += numbers

    def add(self, number: int, record: dict, extra: str | None, raw: bytes | None) -> None:
        record[EXTRA] = extra
        record[SOURCE_KEY] = self.key
        record[SOURCE_LINE] = number
        if raw is not None:
            self.order.append(_PLAIN)
            self.plain.append(raw)
            self.plain_rows.append(record)
            self.plain_numbers.append(number)
        else:
            self.order.append(_ROW)
            self.rows.append(record)

    def _arrow_rows(self) -> pa.Table:
        import pyarrow.json as pj

        block = b"\n".join(self.plain)
        try:
            table = pj.read_json(
                io.BytesIO(block),
                read_options=pj.ReadOptions(use_threads=False, block_size=len(block) + 1),
                parse_options=pj.ParseOptions(explicit_schema=_CONTRACT, unexpected_field_behavior="ignore"),
            )
            table = table.select(_CONTRACT.names).cast(_CONTRACT)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return records_to_table(self.plain_rows)  # e.g. a key given twice: Python's reading (last one wins)
        return _with_lineage(table, self.key, self.plain_numbers)

    def table(self) -> pa.Table | None:
        if not self.order:
            return None
        parts, kinds = [], []
        if self.bulk_numbers:
            assert self.bulk is not None and self.bulk.num_rows == len(self.bulk_numbers)
            parts.append(_with_lineage(self.bulk, self.key, self.bulk_numbers))
            kinds.append(_BULK)
        if self.plain:
            parts.append(self._arrow_rows())
            kinds.append(_PLAIN)
        if self.rows:
            parts.append(records_to_table(self.rows))
            kinds.append(_ROW)
        table = concat(parts)
        if len(parts) > 1:  # back to line order
            order = np.asarray(self.order, np.int8)
            index = np.empty(len(order), np.int64)
            base = 0
            for kind, part in zip(kinds, parts, strict=True):
                at = np.flatnonzero(order == kind)
                index[at] = base + np.arange(len(at))
                base += part.num_rows
            table = table.take(pa.array(index))
        return table.combine_chunks()


_SCHEMA = arrow_schema()
_CONTRACT = contract_schema()


def digest(stripped: bytes) -> int:
    """The dedupe digest of a line (stripped): equal digests, the same line re-sent."""
    return int.from_bytes(hashlib.blake2b(stripped, digest_size=8).digest(), "little", signed=True)


def digests(stripped: list[bytes]) -> list[int]:
    """`digest` of each line, at once (one int64 read of the joined 8-byte digests instead of an int per line)."""
    blake2b = hashlib.blake2b
    joined = b"".join([blake2b(line, digest_size=8).digest() for line in stripped])
    return np.frombuffer(joined, "<i8").tolist()


def _fast(line: bytes):
    """(record, extra, raw bytes for Arrow or None) for a line the fast path can accept, else None (exact path)."""
    stripped = line.strip()
    if stripped.startswith(BOM) or not stripped or stripped.count(b"[") + stripped.count(b"{") > _DEEP:
        return None
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return None
    if type(value) is not dict or not value:
        return None
    if is_plain_valid(value):  # the common case: one generated function, then Arrow builds the row
        return value, None, stripped
    try:
        has_unknown, converted = check_record_flags(value)
    except ContractViolation:
        return None
    version = value["schema_version"]
    if version == 2 and trajectory_problem(value["messages"]) is not None:
        return None  # the exact path gives the reason
    extra = None
    if has_unknown:
        found = unknown_fields(value)
        if found:
            extra = json.dumps(redact_value(found, RULES, secret_keys=True), ensure_ascii=False, sort_keys=True)
    plain = version == 1 and not has_unknown and not converted and _plain_numbers(value)
    return value, extra or None, stripped if plain else None


def _utf8_bad(block: bytes, starts: list[int]) -> np.ndarray:
    """A bool per line: the line is not valid UTF-8 (one decode of the block, restarted after each bad line)."""
    bad = np.zeros(len(starts), bool)
    view, at = memoryview(block), 0
    while True:
        try:
            str(view[at:], "utf-8")
            return bad
        except UnicodeDecodeError as exc:
            line = bisect_right(starts, at + exc.start) - 1
            bad[line] = True
            if line + 1 >= len(starts):
                return bad
            at = starts[line + 1]


def _nesting(block: bytes, starts: list[int]) -> np.ndarray:
    """Opening brackets per line (`[` and `{`), counted over the block at once."""
    chars = np.frombuffer(block, np.uint8)
    where = np.flatnonzero((chars == 91) | (chars == 123))
    lines = np.searchsorted(np.asarray(starts, np.int64), where, side="right") - 1
    return np.bincount(lines, minlength=len(starts))


def _read_bulk(lines: list[bytes]) -> tuple[pa.Table | None, np.ndarray]:
    """Read `lines` with `read_lines_strict`; a block Arrow refuses (or that gives another number of rows) is halved
    until the refused lines are alone. Returns the rows read, in line order, and which lines they are."""
    pieces: list[pa.Table] = []
    read = np.zeros(len(lines), bool)

    def attempt(lo: int, hi: int) -> None:
        try:
            table = read_lines_strict(b"\n".join(lines[lo:hi]))
        except pa.ArrowException:
            table = None
        if table is not None and table.num_rows == hi - lo:
            pieces.append(table)
            read[lo:hi] = True
        elif hi - lo > 1:
            mid = (lo + hi) // 2
            attempt(lo, mid)
            attempt(mid, hi)

    if lines:
        attempt(0, len(lines))
    if not pieces:
        return None, read
    return (pa.concat_tables(pieces) if len(pieces) > 1 else pieces[0]), read


def _bulk(
    batch: list[tuple[int, bytes | TooLarge]], block: bytes, starts: list[int], slow: np.ndarray
) -> tuple[pa.Table | None, np.ndarray, list[bytes]]:
    """The bulk path of a segment (module docstring): the accepted rows (in line order), a bool per line (accepted
    in bulk) and the stripped lines (b"" where not computed)."""
    deep = _nesting(block, starts) > _DEEP
    bad_text = _utf8_bad(block, starts)
    stripped: list[bytes] = []
    candidates: list[int] = []
    for i, (_, line) in enumerate(batch):
        if slow[i] or deep[i] or bad_text[i] or not isinstance(line, bytes):
            stripped.append(b"")
            continue
        text = line.strip()
        stripped.append(text)
        if text[:1] == b"{" and text[-1:] == b"}" and b'"tool_call' not in text:
            candidates.append(i)
    accepted = np.zeros(len(batch), bool)
    table, read = _read_bulk([stripped[i] for i in candidates])
    if table is None:
        return None, accepted, stripped
    rows = np.asarray(candidates, np.int64)[read]  # line index of each row of `table`
    verdict = suspect_rows(table)
    suspect = verdict.suspect
    for name, nulls in verdict.null_if_present.items():
        for row in np.flatnonzero(nulls & ~suspect):
            if not has_key(stripped[rows[row]], name):  # absent, not null: the exact check names it
                suspect[row] = True
    accepted[rows[~suspect]] = True
    return (table.filter(pa.array(~suspect)) if suspect.any() else table), accepted, stripped


def _segment(part: ParsedObject, batch: list[tuple[int, bytes | TooLarge]], settings: IngestSettings) -> None:
    text_chars, max_line = settings.quarantine_text_bytes, settings.max_line_bytes
    starts, offset = [], 0
    for _, line in batch:
        starts.append(offset)
        offset += (len(line) if isinstance(line, bytes) else 0) + 1
    block = b"\n".join(line if isinstance(line, bytes) else b"" for _, line in batch)
    slow = needs_slow_path(block, starts)
    bulk, in_bulk, stripped = _bulk(batch, block, starts, slow)
    segment = _Segment(part.key, bulk)
    if in_bulk.all():  # the common case: every line read in bulk, its bookkeeping done per segment
        assert bulk is not None
        numbers = [number for number, _ in batch]
        part.numbers += numbers
        part.session_ids += bulk.column("session_id").to_pylist()
        part.digests += digests(stripped)
        part.sizes += [len(line) for _, line in batch if type(line) is bytes]  # all of them: all read in bulk
        segment.add_bulk_all(numbers)
        part.tables.append(segment.table())
        return
    bulk_ids = iter(bulk.column("session_id").to_pylist() if bulk is not None else ())
    for i, (number, line) in enumerate(batch):
        if in_bulk[i]:
            assert isinstance(line, bytes)  # only bytes lines are read in bulk (`_bulk`)
            part.numbers.append(number)
            part.session_ids.append(next(bulk_ids))
            part.digests.append(digest(stripped[i]))
            part.sizes.append(len(line))
            segment.add_bulk(number)
            continue
        fast = None if slow[i] or isinstance(line, TooLarge) else _fast(line)
        if fast is not None:
            record, extra, raw = fast
        else:
            verdict = parse_line(line, text_chars=text_chars, max_line_bytes=max_line)
            if verdict is None:
                part.skipped_lines += 1
                continue
            if isinstance(verdict, Rejected):
                part.rejected.append((number, line.size if isinstance(line, TooLarge) else len(line), verdict))
                continue
            assert isinstance(verdict, Accepted)
            record, extra, raw = verdict.record, verdict.extra, None
        assert isinstance(line, bytes)  # a TooLarge line takes neither the fast path nor parse_line's Accepted
        part.numbers.append(number)
        part.session_ids.append(record["session_id"])
        part.digests.append(digest(line.strip()))
        part.sizes.append(len(line))
        segment.add(number, record, extra, raw)
    table = segment.table()
    if table is not None:
        part.tables.append(table)


def parse_object(job: ObjectJob, settings: IngestSettings) -> ParsedObject:
    """Parse every line of one object (see the module docstring). Never raises on bad data: a damaged gzip ends the
    object with `corrupt` set, after the lines decoded before the damage."""
    part = ParsedObject(key=job.key, etag=job.etag, size=job.size)
    chunks = read_line_chunks(
        io.BytesIO(job.data),
        max_line_bytes=settings.max_line_bytes,
        head_bytes=settings.quarantine_text_bytes + 4096,
        chunk_bytes=settings.read_chunk_bytes,
    )
    batch: list[tuple[int, bytes | TooLarge]] = []
    size = 0
    try:
        for lines in chunks:
            part.lines = lines[-1][0]
            batch += lines
            size += sum([len(line) for _, line in lines if type(line) is bytes])
            if size >= SEGMENT_BYTES:
                _segment(part, batch, settings)
                batch, size = [], 0
    except CorruptObject as exc:
        part.corrupt = str(exc)
    if batch:
        _segment(part, batch, settings)
    return part
