"""One log object parsed: the unit of work ingest fans out (one task per object, see `postgame.runners`).

    part = parse_object(ObjectJob(key, etag, size, data), settings)   # -> ParsedObject (picklable, Arrow inside)

Everything that depends only on the line is done here, in a worker: gunzip, line split, JSON, the contract check,
redaction, the line digest and the Arrow rows. What depends on other objects (dedupe by session_id, the quarantine
index, row groups, the manifest) stays with the one process that commits (`postgame.ingest.pipeline`), so the
snapshot is byte for byte the one the one-process path writes.

Per line, two paths with one result:
- fast: orjson, the contract check (a generated yes/no function, `contract.fastcheck`, then the exact one where it
  says no), no redaction (the block pre-filter proved no guard can fire), and the row built by Arrow's JSON reader
  from the line's own bytes when the record is plain (no unknown fields, no integral float converted, no integer in
  a number field);
- exact: `parse_line` (stdlib json, exact error reasons, redaction), taken for every line the pre-filter flags, every
  line orjson rejects or the contract rejects (its message and redacted text come from `parse_line`), and lines
  deep enough to hit json's recursion limit. Rows of such records are built in Python (`records_to_table`).
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field

import orjson
import pyarrow as pa

from postgame.contract.arrow import EXTRA, SOURCE_KEY, SOURCE_LINE, arrow_schema, records_to_table, unknown_fields
from postgame.contract.check import ContractViolation, check_record_flags
from postgame.contract.fastcheck import is_plain_valid
from postgame.contract.spec import AGENT_SESSION
from postgame.ingest.lines import BOM, Accepted, Rejected, parse_line
from postgame.ingest.prefilter import needs_slow_path
from postgame.ingest.reader import CorruptObject, TooLarge, read_lines
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
        return pa.concat_tables(self.tables) if self.tables else arrow_schema().empty_table()


def _contract_schema() -> pa.Schema:
    schema = arrow_schema()
    return pa.schema([schema.field(f.name) for f in AGENT_SESSION.fields])


_NUMBER_FIELDS = tuple((parent.name, sub.name) for parent in AGENT_SESSION.fields if parent.kind == "object"
                       for sub in parent.fields if sub.kind == "number")


def _plain_numbers(record: dict) -> bool:
    """True when every contract number is a float: an int there is written by Python's rules (Arrow's may differ)."""
    for a, b in _NUMBER_FIELDS:
        if type(record[a][b]) is not float:
            return False
    return True


class _Segment:
    """Accepted lines of one segment: plain ones as raw bytes for Arrow, the others as checked Python rows."""

    def __init__(self, key: str):
        self.key = key
        self.order: list[bool] = []  # per accepted line: True = plain (Arrow), False = Python row
        self.plain: list[bytes] = []
        self.plain_rows: list[dict] = []  # the same records parsed, in case Arrow refuses the block
        self.plain_numbers: list[int] = []
        self.rows: list[dict] = []

    def add(self, number: int, record: dict, extra: str | None, raw: bytes | None) -> None:
        record[EXTRA] = extra
        record[SOURCE_KEY] = self.key
        record[SOURCE_LINE] = number
        if raw is not None:
            self.order.append(True)
            self.plain.append(raw)
            self.plain_rows.append(record)
            self.plain_numbers.append(number)
        else:
            self.order.append(False)
            self.rows.append(record)

    def _arrow_rows(self) -> pa.Table:
        import pyarrow.json as pj

        block = b"\n".join(self.plain)
        try:
            table = pj.read_json(io.BytesIO(block), read_options=pj.ReadOptions(use_threads=False,
                                                                               block_size=len(block) + 1),
                                 parse_options=pj.ParseOptions(explicit_schema=_CONTRACT,
                                                               unexpected_field_behavior="ignore"))
            table = table.select(_CONTRACT.names).cast(_CONTRACT)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return records_to_table(self.plain_rows)  # e.g. a key given twice: Python's reading (last one wins)
        n = table.num_rows
        return table.append_column(_SCHEMA.field(EXTRA), pa.nulls(n, pa.string())).append_column(
            _SCHEMA.field(SOURCE_KEY), pa.array([self.key] * n, pa.string())).append_column(
            _SCHEMA.field(SOURCE_LINE), pa.array(self.plain_numbers, pa.int64()))

    def table(self) -> pa.Table | None:
        if not self.order:
            return None
        parts = []
        if self.plain:
            parts.append(self._arrow_rows())
        if self.rows:
            parts.append(records_to_table(self.rows))
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        if self.plain and self.rows:  # back to line order
            plain_at, row_at, order = 0, len(self.plain), []
            for is_plain in self.order:
                if is_plain:
                    order.append(plain_at)
                    plain_at += 1
                else:
                    order.append(row_at)
                    row_at += 1
            table = table.take(pa.array(order, pa.int64()))
        return table.combine_chunks()


_SCHEMA = arrow_schema()
_CONTRACT = _contract_schema()


def digest(stripped: bytes) -> int:
    """The dedupe digest of a line (stripped): equal digests, the same line re-sent."""
    return int.from_bytes(hashlib.blake2b(stripped, digest_size=8).digest(), "little", signed=True)


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
    extra = None
    if has_unknown:
        found = unknown_fields(value)
        if found:
            extra = json.dumps(redact_value(found, RULES, secret_keys=True), ensure_ascii=False, sort_keys=True)
    plain = not has_unknown and not converted and _plain_numbers(value)
    return value, extra or None, stripped if plain else None


def _segment(part: ParsedObject, batch: list[tuple[int, bytes | TooLarge]], settings: IngestSettings) -> None:
    text_chars, max_line = settings.quarantine_text_bytes, settings.max_line_bytes
    starts, offset = [], 0
    for _, line in batch:
        starts.append(offset)
        offset += (len(line) if isinstance(line, bytes) else 0) + 1
    block = b"\n".join(line if isinstance(line, bytes) else b"" for _, line in batch)
    slow = needs_slow_path(block, starts)
    segment = _Segment(part.key)
    for i, (number, line) in enumerate(batch):
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
    lines = read_lines(io.BytesIO(job.data), max_line_bytes=settings.max_line_bytes,
                       head_bytes=settings.quarantine_text_bytes + 4096, chunk_bytes=settings.read_chunk_bytes)
    batch: list[tuple[int, bytes | TooLarge]] = []
    size = 0
    try:
        for number, line in lines:
            part.lines = number
            batch.append((number, line))
            size += len(line) if isinstance(line, bytes) else 0
            if size >= SEGMENT_BYTES:
                _segment(part, batch, settings)
                batch, size = [], 0
    except CorruptObject as exc:
        part.corrupt = str(exc)
    if batch:
        _segment(part, batch, settings)
    return part
