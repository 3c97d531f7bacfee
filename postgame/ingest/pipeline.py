"""The ingest stage: new log objects in, one snapshot out.

    run_ingest("s3://logs/agent-logs/", cfg=cfg)   # -> IngestSummary
    postgame ingest --source s3://logs/agent-logs/ --json

1. Load the committed state (snapshot manifests): objects already read, session ids already seen.
2. List the source; skip what is not a log object (`_SUCCESS`, empty objects) and what was read before (same key,
   ETag and size). An object re-uploaded with new bytes has a new ETag and is read again.
3. Parse each new object: lines parsed, checked against the contract and redacted, one task per object fanned out
   through the configured runner (`runner:`, `postgame.runners`; see `postgame.ingest.objects`). Then, in this
   process and in key order, dedupe by session_id: bad lines go to the quarantine with their reason; exact re-sends
   are counted; a line that reuses a known session_id with different content is quarantined (`schema`, the id must
   be unique). A damaged gzip is reported and not marked as read.
4. Commit: upload data, quarantine and dedupe index, then the manifest (see `postgame.ingest.snapshot`).

`ingest(..., mapper=None)` is the one-process reference path (every line through `parse_line`, in order); with a
mapper, objects are parsed in parallel and the result is the same snapshot, byte for byte (same content id): the
equivalence test (tests/data/test_ingest_parallel_equivalence.py) holds the two paths together.

Any store failure aborts the run before the commit, leaving the state as it was: a re-run reads the same objects.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel

from postgame.contract.arrow import SOURCE_KEY, SOURCE_LINE, to_record
from postgame.ingest import snapshot as snap
from postgame.ingest.errors import StoreError, store_errors
from postgame.ingest.lines import REASONS, Accepted, Rejected, parse_line
from postgame.ingest.objects import ObjectJob, ParsedObject, digest, parse_object
from postgame.ingest.reader import CorruptObject, TooLarge, read_lines
from postgame.settings.ingest import IngestSettings
from postgame.store import LocalStore, ObjectInfo, ObjectStore, split_uri

log = logging.getLogger(__name__)
LOG_SUFFIXES = (".jsonl", ".jsonl.gz")


class IngestSummary(BaseModel):
    """What one run did. `snapshot_id` is None when nothing new was read (no snapshot written)."""

    snapshot_id: str | None
    snapshot_uri: str | None
    objects_read: int
    objects_skipped: int
    corrupt_objects: list[snap.CorruptObjectReport]
    records_ingested: int
    duplicates: int
    quarantined: dict[str, int]
    manifest_uri: str | None

    def cli_dict(self) -> dict:
        """The `--json` object of `postgame ingest`."""
        return self.model_dump(mode="json", exclude={"manifest_uri"})


def is_log_object(key: str) -> bool:
    return key.endswith(LOG_SUFFIXES)


Mapper = Callable[[Callable, Iterable], Iterator]  # (fn, items) -> fn(item) for each item, in order


class _Run:
    """One run's reading: every new object streamed into one SnapshotWriter, with the counts."""

    def __init__(self, settings: IngestSettings, writer: snap.SnapshotWriter, seen: dict[str, int]):
        self.settings = settings
        self.writer = writer
        self.seen = seen
        self.text_chars = settings.quarantine_text_bytes
        self.complete: list[snap.SourceObject] = []
        self.corrupt: list[snap.CorruptObjectReport] = []
        self.read: list[snap.SourceObject] = []  # complete and corrupt: the snapshot holds what both gave

    def read_object(self, source: ObjectStore, info: ObjectInfo) -> None:
        stats = snap.SourceObject(key=info.key, etag=info.etag, size=info.size)
        self.read.append(stats)
        try:
            self._stream(source, stats)
        except CorruptObject as exc:
            self.corrupt.append(
                snap.CorruptObjectReport(
                    key=info.key,
                    etag=info.etag,
                    size=info.size,
                    detail=str(exc),
                    lines_read=stats.lines,
                    records_kept=stats.records,
                )
            )
            log.warning(
                "ingest %s: corrupt object, %s (kept the %d records decoded before the damage)",
                info.key,
                exc,
                stats.records,
            )
            return
        self.complete.append(stats)
        log.info(
            "ingest %s: %d lines, %d records, %d duplicates, %d quarantined",
            info.key,
            stats.lines,
            stats.records,
            stats.duplicates,
            sum(stats.quarantined.values()),
        )

    def _stream(self, source: ObjectStore, stats: snap.SourceObject) -> None:
        max_line = self.settings.max_line_bytes
        with source.open(stats.key) as stream:
            lines = read_lines(
                stream,
                max_line_bytes=max_line,
                head_bytes=self.text_chars + 4096,
                chunk_bytes=self.settings.read_chunk_bytes,
            )
            for number, line in lines:
                stats.lines = number
                verdict = parse_line(line, text_chars=self.text_chars, max_line_bytes=max_line)
                if verdict is None:
                    stats.skipped_lines += 1
                elif isinstance(verdict, Rejected):
                    size = line.size if isinstance(line, TooLarge) else len(line)
                    self._quarantine(
                        stats, number, size, verdict.reason, verdict.detail, verdict.text, verdict.truncated
                    )
                else:
                    assert isinstance(line, bytes)  # parse_line rejects every TooLarge line
                    self._keep(stats, number, line, verdict)

    def _quarantine(
        self, stats: snap.SourceObject, number: int, size: int, reason: str, detail: str, text: str, truncated: bool
    ) -> None:
        stats.quarantined[reason] += 1
        self.writer.add_quarantine(
            snap.QuarantineEntry(
                index=self.writer.quarantined,
                object_key=stats.key,
                etag=stats.etag,
                line=number,
                reason=reason,
                detail=detail,
                bytes=size,
                text=text,
                truncated=truncated,
            )
        )

    def _keep(self, stats: snap.SourceObject, number: int, line: bytes, accepted: Accepted) -> None:
        record = accepted.record
        session_id = record["session_id"]
        line_digest = digest(line.strip())
        known = self.seen.get(session_id)
        if known == line_digest:  # an exact re-send
            stats.duplicates += 1
            return
        if known is not None:
            text = json.dumps(to_record(dict(record, extra=accepted.extra)), ensure_ascii=False)  # as stored
            self._quarantine(
                stats,
                number,
                len(line),
                "schema",
                f"session_id {session_id!r} was already ingested with different content (session_id must be unique)",
                text[: self.text_chars],
                len(text) > self.text_chars,
            )
            return
        self.seen[session_id] = line_digest
        record["extra"] = accepted.extra  # the record's own unknown `extra`, if any, is inside it already
        record[SOURCE_KEY] = stats.key
        record[SOURCE_LINE] = number
        stats.records += 1
        self.writer.add_record(record, session_id, line_digest, len(line))

    def counts(self, objects_skipped: int) -> snap.Counts:
        counts = snap.Counts(objects_read=len(self.complete), objects_skipped=objects_skipped)
        for stats in self.read:
            counts.lines += stats.lines
            counts.records_ingested += stats.records
            counts.duplicates += stats.duplicates
            counts.skipped_lines += stats.skipped_lines
            for reason in REASONS:
                counts.quarantined[reason] += stats.quarantined[reason]
        return counts


class _ParallelRun(_Run):
    """The same run with objects parsed elsewhere (`objects.parse_object`): results are taken in key order and
    deduped here exactly as `_Run` does line by line, so both give the same snapshot."""

    def take(self, source: ObjectStore, part: ParsedObject) -> None:
        stats = snap.SourceObject(
            key=part.key, etag=part.etag, size=part.size, lines=part.lines, skipped_lines=part.skipped_lines
        )
        self.read.append(stats)
        keep, conflicts = [], []
        for i, (session_id, line_digest) in enumerate(zip(part.session_ids, part.digests)):
            known = self.seen.get(session_id)
            if known == line_digest:
                stats.duplicates += 1
            elif known is not None:
                conflicts.append(i)
            else:
                self.seen[session_id] = line_digest
                keep.append(i)
        texts = self._conflict_texts(source, part, conflicts) if conflicts else {}
        events: list[tuple[int, int, Rejected | int]] = [
            (number, size, verdict) for number, size, verdict in part.rejected
        ]
        events += [(part.numbers[i], part.sizes[i], i) for i in conflicts]
        for number, size, verdict in sorted(events, key=lambda e: e[0]):  # the quarantine in line order
            if isinstance(verdict, Rejected):
                self._quarantine(stats, number, size, verdict.reason, verdict.detail, verdict.text, verdict.truncated)
            else:
                session_id = part.session_ids[verdict]
                text = texts[number]
                self._quarantine(
                    stats,
                    number,
                    size,
                    "schema",
                    f"session_id {session_id!r} was already ingested with different content "
                    f"(session_id must be unique)",
                    text[: self.text_chars],
                    len(text) > self.text_chars,
                )
        if keep:
            table = part.table
            if len(keep) < table.num_rows:
                import pyarrow as pa

                table = table.take(pa.array(keep, pa.int64()))
            self.writer.add_rows(
                table,
                [part.session_ids[i] for i in keep],
                [part.digests[i] for i in keep],
                [part.sizes[i] for i in keep],
            )
            stats.records += len(keep)
        if part.corrupt is not None:
            self.corrupt.append(
                snap.CorruptObjectReport(
                    key=part.key,
                    etag=part.etag,
                    size=part.size,
                    detail=part.corrupt,
                    lines_read=stats.lines,
                    records_kept=stats.records,
                )
            )
            log.warning(
                "ingest %s: corrupt object, %s (kept the %d records decoded before the damage)",
                part.key,
                part.corrupt,
                stats.records,
            )
            return
        self.complete.append(stats)
        log.info(
            "ingest %s: %d lines, %d records, %d duplicates, %d quarantined",
            part.key,
            stats.lines,
            stats.records,
            stats.duplicates,
            sum(stats.quarantined.values()),
        )

    def _conflict_texts(self, source: ObjectStore, part: ParsedObject, conflicts: list[int]) -> dict[int, str]:
        """The stored text of records whose session_id is taken (rare): their lines parsed again, as `_keep` does."""
        wanted = {part.numbers[i] for i in conflicts}
        texts = {}
        with source.open(part.key) as stream:
            for number, line in read_lines(
                stream,
                max_line_bytes=self.settings.max_line_bytes,
                head_bytes=self.text_chars + 4096,
                chunk_bytes=self.settings.read_chunk_bytes,
            ):
                if number in wanted:
                    accepted = parse_line(line, text_chars=self.text_chars, max_line_bytes=self.settings.max_line_bytes)
                    assert isinstance(accepted, Accepted), f"{part.key}:{number} changed while ingest read it"
                    texts[number] = json.dumps(
                        to_record(dict(accepted.record, extra=accepted.extra)), ensure_ascii=False
                    )
                    if len(texts) == len(wanted):
                        break
        return texts


def _jobs(source: ObjectStore, todo: list[ObjectInfo]) -> Iterator[ObjectJob]:
    """Each object's bytes, read when the mapper asks for the next one (at most its window ahead)."""
    for info in todo:
        with source.open(info.key) as stream:
            data = stream.read()
        yield ObjectJob(key=info.key, etag=info.etag, size=info.size, data=data)


def _new_objects(
    source: ObjectStore, prefix: str, state: ObjectStore, settings: IngestSettings, committed: snap.CommittedState
) -> tuple[list[ObjectInfo], int]:
    """The log objects to read, in key order, and how many listed objects were skipped."""
    todo: list[ObjectInfo] = []
    skipped = 0
    same_store = source.uri == state.uri
    for info in sorted(source.list(prefix), key=lambda o: o.key):
        if same_store and info.key.startswith(settings.state_prefix):
            continue  # postgame's own files, not logs
        if not is_log_object(info.key) or info.size == 0 or (info.key, info.etag, info.size) in committed.read:
            skipped += 1
            continue
        todo.append(info)
    return todo, skipped


def ingest(
    source: ObjectStore,
    prefix: str,
    *,
    state: ObjectStore,
    settings: IngestSettings,
    workdir: Path,
    source_uri: str,
    mapper: Mapper | None = None,
    config_sha256: str | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> IngestSummary:
    """Read the new log objects of `source` under `prefix` into one snapshot committed to `state`. With `mapper`,
    objects are parsed through it (in parallel); without, line by line in this process (the reference path).
    `config_sha256` (the config that runs it) is recorded in the snapshot's manifest for lineage. `progress(text, 1)`
    is told as each new object is read ("k/n objects read": how many there are is known only here)."""
    started = time.monotonic()
    committed = snap.load_state(state, settings.state_prefix)
    todo, skipped = _new_objects(source, prefix, state, settings, committed)
    if not todo:
        log.info("ingest %s: nothing new (%d objects skipped)", source_uri, skipped)
        return IngestSummary(
            snapshot_id=None,
            snapshot_uri=None,
            objects_read=0,
            objects_skipped=skipped,
            corrupt_objects=[],
            records_ingested=0,
            duplicates=0,
            quarantined=dict.fromkeys(REASONS, 0),
            manifest_uri=None,
        )
    writer = snap.SnapshotWriter(workdir, settings.batch_rows, settings.batch_bytes)
    try:
        tell = progress or (lambda text, done: None)
        if mapper is None:
            run = _Run(settings, writer, committed.seen)
            for n, info in enumerate(todo, 1):
                run.read_object(source, info)
                tell(f"{n}/{len(todo)} objects read", 1)
        else:
            run = _ParallelRun(settings, writer, committed.seen)
            parse = functools.partial(parse_object, settings=settings)
            for n, part in enumerate(mapper(parse, _jobs(source, todo)), 1):
                run.take(source, part)
                tell(f"{n}/{len(todo)} objects read", 1)
        tell(f"{len(todo)} objects read; committing the snapshot", 0)
        counts = run.counts(skipped)
        # Two ingests into one store must not both commit on the same parent: check the head just before.
        heads = snap.manifests(state, settings.state_prefix)
        if (heads[-1].snapshot_id if heads else None) != (committed.head.snapshot_id if committed.head else None):
            raise StoreError(
                "another ingest committed a snapshot to this store during this run; run again", transient=True
            )
        manifest = snap.commit(
            writer,
            state,
            settings.state_prefix,
            parent=committed.head,
            sources=run.complete,
            corrupt=run.corrupt,
            counts=counts,
            source_uri=source_uri,
            config_sha256=config_sha256,
        )
    finally:
        writer.discard()
    base = snap.snapshot_prefix(settings.state_prefix, manifest.snapshot_id)
    log.info(
        "ingest %s: snapshot %s, %d records in %.1fs",
        source_uri,
        manifest.snapshot_id[:12],
        counts.records_ingested,
        time.monotonic() - started,
    )
    return IngestSummary(
        snapshot_id=manifest.snapshot_id,
        snapshot_uri=state.url(base + "data.parquet"),
        objects_read=counts.objects_read,
        objects_skipped=counts.objects_skipped,
        corrupt_objects=run.corrupt,
        records_ingested=counts.records_ingested,
        duplicates=counts.duplicates,
        quarantined=dict(counts.quarantined),
        manifest_uri=state.url(base + "manifest.json"),
    )


def run_ingest(
    source_uri: str, *, cfg, mapper: Mapper | None = None, progress: Callable[[str, int], None] | None = None
) -> IngestSummary:
    """Ingest the logs at `source_uri` (a folder or s3://bucket/prefix) into the store configured in `cfg`, objects
    parsed through `mapper` (default: the `runner:` engine of `cfg`, without Prefect; `runner.kind: serial` = the
    one-process path). Store failures raise StoreError; `is_transient_s3_error` tells which are worth a retry.
    `progress` as in `ingest`."""
    if mapper is None and cfg.runner.kind != "serial":
        from postgame.runners import local_mapper

        with local_mapper(cfg.runner) as local:
            return run_ingest(source_uri, cfg=cfg, mapper=local, progress=progress)
    from postgame import runtime
    from postgame.lineage import config_sha256

    root, prefix = split_uri(source_uri)
    with store_errors(f"{source_uri} -> {runtime.store_uri(cfg)}"):
        source = runtime.store(cfg, root)
        state = runtime.store(cfg)
        if isinstance(source, LocalStore) and not source.root.is_dir():
            raise StoreError(f"source folder {source.root} does not exist", transient=False)
        return ingest(
            source,
            prefix,
            state=state,
            settings=cfg.ingest,
            workdir=cfg.home / "tmp",
            source_uri=source_uri,
            mapper=mapper,
            config_sha256=config_sha256(cfg),
            progress=progress,
        )
