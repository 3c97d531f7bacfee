"""Snapshots: immutable, content-addressed Parquet files of ingested records, each with a manifest beside it.

Layout in the postgame store, under `ingest.state_prefix` (default `ingest/`):

    snapshots/<id>/data.parquet          the records (contract columns + `extra` + lineage), zstd
    snapshots/<id>/quarantine.jsonl.gz   the lines set aside, with object key, line number, reason, detail
    snapshots/<id>/seen.parquet          (session_id, line digest) of the records: the dedupe index
    snapshots/<id>/manifest.json         sources and their ETags, counts, parent, code version. Written LAST.

The manifest is the commit point. A snapshot exists only once its manifest does; the objects read, the session ids
seen and the quarantine are all derived from committed manifests. So a crash anywhere before the manifest is written
leaves the state as it was (the files already uploaded are ignored and overwritten by the re-run, which reads the same
objects again), and a crash after it leaves a complete snapshot: nothing is lost and nothing counted twice.

`<id>` is the sha256 of the snapshot's content: the sha256s of its data and quarantine files, the source and corrupt
objects (key, ETag, size) it read, its parent and its layout. Same content, same id.

A snapshot that held secrets in clear (ingested before a redaction fix) is replaced by `postgame redact`
(`postgame.ingest.remediate`): a successor with the same records re-redacted, the same parent, sequence number and
sources, and `supersedes: <old id>` in its manifest. The replacement counts once the ledger records it:

    ledger/superseded/<old id>.json      old id, successor id, when, what kinds of secret (never a value). Written once.

From then on `manifests` lists the successor in the old one's place and `resolve` turns the old id into the
successor's; before it, a successor is not listed (a crash half-way leaves the old snapshot the one that counts).

The data file's layout (`contract.arrow`) is 1 while every record is version 1 (byte for byte what ingest wrote before
version 2 existed) and 2 once a version 2 record comes: the row groups written so far are then rewritten in layout 2,
once. The manifest's `schema_version` is that layout.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

from pydantic import BaseModel, Field

from postgame.contract.spec import AGENT_SESSION, SCHEMA_VERSION
from postgame.ingest.lines import REASONS
from postgame.store import ObjectStore


class FileRef(BaseModel):
    key: str
    sha256: str
    bytes: int
    rows: int


class SourceObject(BaseModel):
    """A log object read completely; (key, etag, size) is how a later run knows it was read."""

    key: str
    etag: str
    size: int
    lines: int = 0
    records: int = 0
    duplicates: int = 0
    quarantined: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(REASONS, 0))
    skipped_lines: int = Field(0, description="Blank lines and empty JSON objects.")


class CorruptObjectReport(BaseModel):
    """A log object that could not be decoded to the end. It is not marked as read: a fixed re-upload is read."""

    key: str
    etag: str
    size: int
    detail: str
    lines_read: int
    records_kept: int


class Counts(BaseModel):
    objects_read: int = 0
    objects_skipped: int = 0
    lines: int = 0
    records_ingested: int = 0
    duplicates: int = 0
    skipped_lines: int = 0
    quarantined: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(REASONS, 0))

    @property
    def quarantined_total(self) -> int:
        return sum(self.quarantined.values())


class SnapshotManifest(BaseModel):
    snapshot_id: str
    seq: int = Field(description="1 for the first snapshot of a store, then +1 per committed snapshot.")
    parent: str | None = Field(description="The snapshot committed before this one.")
    created_at: str
    code_version: str
    config_sha256: str | None = Field(None, description="The config that made it (postgame.lineage.config_sha256).")
    contract: str = AGENT_SESSION.name
    schema_version: int = Field(
        SCHEMA_VERSION,
        description="Layout of the data file: the highest schema_version of its records (1 when it has none).",
    )
    source_uri: str
    store_uri: str
    data: FileRef
    quarantine: FileRef
    seen_index: FileRef
    sources: list[SourceObject]
    corrupt_objects: list[CorruptObjectReport]
    counts: Counts
    supersedes: str | None = Field(
        None,
        description="The snapshot this one replaces (`postgame redact`): the same records, re-redacted. Listed only "
        "once the ledger records the replacement.",
    )


class Supersession(BaseModel):
    """The ledger's record that a snapshot was replaced (`ledger/superseded/<snapshot_id>.json`), written once."""

    snapshot_id: str = Field(description="The snapshot replaced (its objects are deleted after this is written).")
    superseded_by: str
    reason: str = "redaction"
    at: str = Field(description="When the replacement was recorded (ISO 8601, UTC).")
    records: int = Field(description="Records (data rows) re-redacted.")
    quarantined: int = Field(0, description="Quarantine entries re-redacted.")
    kinds: list[str] = Field(description="Kinds of secret found (aws_key, github_token, ...); never a value.")
    code_version: str

    @property
    def date(self) -> str:
        return self.at[:10]


class QuarantineEntry(BaseModel):
    index: int = Field(description="Position in the snapshot's quarantine file; `<snapshot id[:12]>:<index>` names it.")
    object_key: str
    etag: str
    line: int
    reason: str
    detail: str
    bytes: int = Field(description="Size of the original line.")
    text: str = Field(description="The line, redacted; cut when `truncated`.")
    truncated: bool


def code_version() -> str:
    """`postgame <version>` plus the git commit when run from a checkout (`+dirty` with uncommitted changes)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        text = f"postgame {version('postgame')}"
    except PackageNotFoundError:
        text = "postgame (not installed)"
    root = Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return text
    return f"{text}+git.{sha}{'.dirty' if dirty else ''}" if sha else text


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class SnapshotWriter:
    """Collects one run's records and quarantine in local files (memory: one batch), then commits them."""

    workdir: Path
    batch_rows: int
    batch_bytes: int
    rows: list[dict] = field(default_factory=list)
    tables: list = field(default_factory=list)  # pyarrow.Table slices of the next row group (parallel path)
    pending: int = 0  # rows in `tables`
    row_bytes: int = 0
    records: int = 0
    quarantined: int = 0
    new_ids: list[tuple[str, int]] = field(default_factory=list)
    version: int = SCHEMA_VERSION  # the data file's layout

    def __post_init__(self) -> None:
        import pyarrow.parquet as pq

        from postgame.contract.arrow import arrow_schema

        self.workdir.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="ingest-", dir=self.workdir))
        self.schema = arrow_schema(self.version)
        self.data_path = self.dir / "data.parquet"
        self.quarantine_path = self.dir / "quarantine.jsonl.gz"
        self.seen_path = self.dir / "seen.parquet"
        self._parquet = pq.ParquetWriter(self.data_path, self.schema, compression="zstd")
        self._qfile = open(self.quarantine_path, "wb")
        # mtime=0 and no file name: the same quarantine gives the same bytes, so a re-run gives the same snapshot id
        self._quarantine = gzip.GzipFile(filename="", mode="wb", fileobj=self._qfile, mtime=0)

    def add_record(self, row: dict, session_id: str, digest: int, size: int) -> None:
        self.rows.append(row)
        self.new_ids.append((session_id, digest))
        self.row_bytes += size
        self.records += 1
        if len(self.rows) >= self.batch_rows or self.row_bytes >= self.batch_bytes:
            self.flush()

    def add_rows(self, table, ids: list[str], digests: list[int], sizes: list[int]) -> None:
        """Rows already in Arrow (the parallel path): cut into row groups exactly where `add_record` one row at a
        time would cut them, so both paths write the same bytes."""
        start = 0
        for i, size in enumerate(sizes):
            self.pending += 1
            self.row_bytes += size
            if self.pending >= self.batch_rows or self.row_bytes >= self.batch_bytes:
                self.tables.append(table.slice(start, i + 1 - start))
                start = i + 1
                self.flush()
        if start < len(sizes):
            self.tables.append(table.slice(start))
        self.new_ids.extend(zip(ids, digests))
        self.records += len(sizes)

    def add_row_group(self, table, ids: list[str], digests: list[int]) -> None:
        """Rows written as one row group, as they come (a snapshot re-written by `postgame redact` keeps the row
        groups of the file it replaces)."""
        self.flush()
        self._write(table)
        self.new_ids.extend(zip(ids, digests))
        self.records += table.num_rows

    def add_quarantine(self, entry: QuarantineEntry) -> None:
        self._quarantine.write((entry.model_dump_json() + "\n").encode("utf-8"))
        self.quarantined += 1

    def flush(self) -> None:
        from postgame.contract.arrow import concat, records_to_table

        if self.rows:
            self._write(records_to_table(self.rows))
        if self.tables:
            self._write(concat(self.tables).combine_chunks())
        self.rows, self.tables, self.row_bytes, self.pending = [], [], 0, 0

    def _write(self, table) -> None:
        from postgame.contract.arrow import layout_of, upgrade

        if layout_of(table.schema) > self.version:
            self._upgrade()
        self._parquet.write_table(upgrade(table) if self.version == 2 else table)

    def _upgrade(self) -> None:
        """The data file from layout 1 to 2: the row groups written so far rewritten, one at a time."""
        import pyarrow.parquet as pq

        from postgame.contract.arrow import arrow_schema, upgrade

        self._parquet.close()
        old = self.data_path.with_name("data.layout1.parquet")
        self.data_path.replace(old)
        self.version, self.schema = 2, arrow_schema(2)
        self._parquet = pq.ParquetWriter(self.data_path, self.schema, compression="zstd")
        written = pq.ParquetFile(old)
        for i in range(written.num_row_groups):
            self._parquet.write_table(upgrade(written.read_row_group(i)))
        written.close()
        old.unlink()

    def close(self) -> dict[str, FileRef]:
        """Finish the local files; their keys are filled in by `commit`."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.flush()
        self._parquet.close()
        self._quarantine.close()
        self._qfile.close()
        ids, digests = zip(*self.new_ids) if self.new_ids else ((), ())
        seen = pa.table({"session_id": pa.array(ids, pa.string()), "digest": pa.array(digests, pa.int64())})
        pq.write_table(seen, self.seen_path, compression="zstd")
        self.new_ids = []
        return {
            name: FileRef(key="", sha256=_sha256_file(path), bytes=path.stat().st_size, rows=rows)
            for name, path, rows in (
                ("data", self.data_path, self.records),
                ("quarantine", self.quarantine_path, self.quarantined),
                ("seen_index", self.seen_path, self.records),
            )
        }

    def discard(self) -> None:
        for handle in (self._quarantine, self._qfile):
            try:
                handle.close()
            except (OSError, ValueError):
                pass
        try:
            self._parquet.close()
        except Exception:  # noqa: BLE001 - best effort: the folder is removed anyway
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


def snapshot_id_of(
    files: dict[str, FileRef],
    sources: list[SourceObject],
    corrupt: list[CorruptObjectReport],
    parent: str | None,
    schema_version: int = SCHEMA_VERSION,
) -> str:
    content = {
        "contract": AGENT_SESSION.name,
        "schema_version": schema_version,
        "parent": parent,
        "data": files["data"].sha256,
        "quarantine": files["quarantine"].sha256,
        "sources": [[s.key, s.etag, s.size] for s in sources],
        "corrupt": [[c.key, c.etag, c.size] for c in corrupt],
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def snapshot_prefix(state_prefix: str, snapshot_id: str) -> str:
    return f"{state_prefix}snapshots/{snapshot_id}/"


def commit(
    writer: SnapshotWriter,
    store: ObjectStore,
    state_prefix: str,
    *,
    parent: SnapshotManifest | None,
    sources: list[SourceObject],
    corrupt: list[CorruptObjectReport],
    counts: Counts,
    source_uri: str,
    config_sha256: str | None = None,
) -> SnapshotManifest:
    """Upload the files, then the manifest (the commit point). Returns the committed manifest."""
    files = writer.close()
    snapshot_id = snapshot_id_of(files, sources, corrupt, parent.snapshot_id if parent else None, writer.version)
    _upload(writer, store, state_prefix, snapshot_id, files)
    manifest = SnapshotManifest(
        snapshot_id=snapshot_id,
        seq=(parent.seq + 1) if parent else 1,
        parent=parent.snapshot_id if parent else None,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        code_version=code_version(),
        config_sha256=config_sha256,
        schema_version=writer.version,
        source_uri=source_uri,
        store_uri=store.uri,
        data=files["data"],
        quarantine=files["quarantine"],
        seen_index=files["seen_index"],
        sources=sources,
        corrupt_objects=corrupt,
        counts=counts,
    )
    store.put(snapshot_prefix(state_prefix, snapshot_id) + "manifest.json", manifest.model_dump_json(indent=2).encode())
    return manifest


def _upload(writer: SnapshotWriter, store: ObjectStore, state_prefix: str, snapshot_id: str, files: dict) -> None:
    """The closed writer's files under the snapshot's prefix; their keys filled in `files`."""
    base = snapshot_prefix(state_prefix, snapshot_id)
    for name, path, filename in (
        ("data", writer.data_path, "data.parquet"),
        ("quarantine", writer.quarantine_path, "quarantine.jsonl.gz"),
        ("seen_index", writer.seen_path, "seen.parquet"),
    ):
        files[name] = files[name].model_copy(update={"key": base + filename})
        store.put_file(base + filename, path)


def commit_successor(writer: SnapshotWriter, store: ObjectStore, state_prefix: str, old: SnapshotManifest):
    """Upload the re-redacted successor of `old` (same parent, seq, sources and counts; `supersedes` = old), manifest
    last. Not listed until the ledger records the replacement. When a crashed run already wrote it (same content,
    same id), it is returned as it is: there is never a second one. Returns (manifest, whether it was written now)."""
    files = writer.close()
    snapshot_id = snapshot_id_of(files, old.sources, old.corrupt_objects, old.parent, writer.version)
    key = snapshot_prefix(state_prefix, snapshot_id) + "manifest.json"
    if store.exists(key):
        return SnapshotManifest.model_validate_json(store.get(key)), False
    _upload(writer, store, state_prefix, snapshot_id, files)
    manifest = old.model_copy(
        update={
            "snapshot_id": snapshot_id,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "code_version": code_version(),
            "schema_version": writer.version,
            "store_uri": store.uri,
            "data": files["data"],
            "quarantine": files["quarantine"],
            "seen_index": files["seen_index"],
            "supersedes": old.snapshot_id,
        }
    )
    store.put(key, manifest.model_dump_json(indent=2).encode())
    return manifest, True


def supersession_key(state_prefix: str, snapshot_id: str) -> str:
    return f"{state_prefix}ledger/superseded/{snapshot_id}.json"


def supersessions(store: ObjectStore, state_prefix: str) -> dict[str, Supersession]:
    """The ledger's replacements: replaced snapshot id -> its record."""
    return _read_state(store, state_prefix)[1]


def current_id(replaced: dict[str, Supersession], snapshot_id: str) -> str:
    """The snapshot that stands for `snapshot_id` now: its successor's successor ..., or itself."""
    seen = set()
    while snapshot_id in replaced and snapshot_id not in seen:
        seen.add(snapshot_id)
        snapshot_id = replaced[snapshot_id].superseded_by
    return snapshot_id


def stored_manifests(store: ObjectStore, state_prefix: str) -> list[SnapshotManifest]:
    """Every manifest in the store, oldest first: replaced snapshots not yet deleted and successors whose replacement
    is not recorded (a crashed `postgame redact`) included. Readers want `manifests`."""
    return _read_state(store, state_prefix)[0]


def _counted(found: list[SnapshotManifest], replaced: dict[str, Supersession]) -> list[SnapshotManifest]:
    """The snapshots that count: not replaced, and not a successor whose replacement is not recorded."""
    successors = {r.superseded_by for r in replaced.values()}
    return [m for m in found if m.snapshot_id not in replaced and (m.supersedes is None or m.snapshot_id in successors)]


def _read_state(store: ObjectStore, state_prefix: str) -> tuple[list[SnapshotManifest], dict[str, Supersession]]:
    """`stored_manifests` and `supersessions` from one listing (a folder store walks its whole tree per listing)."""
    snapshots, superseded = f"{state_prefix}snapshots/", supersession_key(state_prefix, "")[: -len(".json")]
    found, replaced = [], {}
    for info in store.list(state_prefix):
        if info.key.startswith(snapshots) and info.key.endswith("/manifest.json"):
            found.append(SnapshotManifest.model_validate_json(store.get(info.key)))
        elif info.key.startswith(superseded) and info.key.endswith(".json"):
            record = Supersession.model_validate_json(store.get(info.key))
            replaced[record.snapshot_id] = record
    return sorted(found, key=lambda m: m.seq), replaced


def manifests(store: ObjectStore, state_prefix: str) -> list[SnapshotManifest]:
    """Every committed snapshot, oldest first; a replaced one (`postgame redact`) in its successor's place."""
    return _counted(*_read_state(store, state_prefix))


@dataclass
class CommittedState:
    snapshots: list[SnapshotManifest]
    read: set[tuple[str, str, int]]  # (key, etag, size) of every object read completely
    seen: dict[str, int]  # session_id -> digest of its line

    @property
    def head(self) -> SnapshotManifest | None:
        return self.snapshots[-1] if self.snapshots else None


def load_state(store: ObjectStore, state_prefix: str) -> CommittedState:
    """What committed snapshots say: objects read and session ids seen (memory: ~150 bytes per session id)."""
    import pyarrow.parquet as pq

    snapshots = manifests(store, state_prefix)
    read = {(s.key, s.etag, s.size) for m in snapshots for s in m.sources}
    seen: dict[str, int] = {}
    for m in snapshots:
        if m.seen_index.rows:
            table = pq.read_table(io.BytesIO(store.get(m.seen_index.key)))
            seen.update(zip(table.column("session_id").to_pylist(), table.column("digest").to_pylist()))
    return CommittedState(snapshots=snapshots, read=read, seen=seen)


def _supersession(store: ObjectStore, state_prefix: str, snapshot_id: str) -> Supersession | None:
    key = supersession_key(state_prefix, snapshot_id)
    return Supersession.model_validate_json(store.get(key)) if store.exists(key) else None


def resolve(store: ObjectStore, state_prefix: str, snapshot_id: str) -> SnapshotManifest:
    """The manifest of `snapshot_id`: a full id, a unique prefix of at least 6 characters, or `latest`. The id of a
    replaced snapshot gives its successor's manifest (the same records, re-redacted)."""
    from postgame.errors import PostgameError

    if len(snapshot_id) == 64:  # a full id: a few reads, no listing
        seen = set()
        while snapshot_id not in seen and (record := _supersession(store, state_prefix, snapshot_id)) is not None:
            seen.add(snapshot_id)
            snapshot_id = record.superseded_by
        key = f"{snapshot_prefix(state_prefix, snapshot_id)}manifest.json"
        if store.exists(key):
            manifest = SnapshotManifest.model_validate_json(store.get(key))
            made = manifest.supersedes and _supersession(store, state_prefix, manifest.supersedes)
            if manifest.supersedes is None or (made and made.superseded_by == snapshot_id):
                return manifest
    stored, replaced = _read_state(store, state_prefix)
    if snapshot_id == "latest":
        found = _counted(stored, replaced)
        if not found:
            raise PostgameError(f"no snapshot yet in {store.uri}/{state_prefix}: run `postgame ingest` first")
        return found[-1]
    if len(snapshot_id) >= 6:
        counted = {m.snapshot_id: m for m in _counted(stored, replaced)}
        ids = {current_id(replaced, i) for i in [*counted, *replaced] if i.startswith(snapshot_id)}
        matches = [counted[i] for i in sorted(ids) if i in counted]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise PostgameError(f"snapshot id {snapshot_id!r} is ambiguous: {len(matches)} snapshots start with it")
    raise PostgameError(
        f"no snapshot {snapshot_id!r} in {store.uri}/{state_prefix} (see `postgame quarantine ls` or "
        f"the output of `postgame ingest`)"
    )


def local_path(store: ObjectStore, key: str, cache: Path, sha256: str) -> Path:
    """A local file with the object's bytes: the store's own file for a folder store, else a verified cached copy."""
    url = urlparse(store.url(key))
    if url.scheme == "file":
        return Path(url.path)
    path = cache / sha256
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        with store.open(key) as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        if _sha256_file(tmp) != sha256:
            tmp.unlink()
            raise ValueError(f"{store.url(key)}: content does not match its sha256 {sha256} (damaged snapshot)")
        tmp.replace(path)
    return path


def read_quarantine(store: ObjectStore, manifest: SnapshotManifest) -> Iterator[QuarantineEntry]:
    if not manifest.quarantine.rows:
        return
    with gzip.open(io.BytesIO(store.get(manifest.quarantine.key)), "rt", encoding="utf-8") as fh:
        for line in fh:
            yield QuarantineEntry.model_validate_json(line)
