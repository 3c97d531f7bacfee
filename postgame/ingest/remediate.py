"""Secret remediation: committed snapshots that hold text today's redaction would change are replaced by a
re-redacted successor, and deleted.

    postgame redact --snapshot ID | --all [--dry-run] [--json]
    remediate(cfg, ["3fa4c1"]) -> RedactReport        # remediate(cfg, None): every snapshot

Snapshots are immutable (their ids are content hashes), so a secret a redaction bug let through (`github_pat_...`
on the parallel ingest path before 5e3908b) cannot be edited out: the snapshot is replaced. What is affected is what
the audit finds (`postgame.ingest.audit`); the successor holds every record with each string put through the same
`audit.clean`, in the same row groups, with the same parent, sequence number, sources and counts, so ingest, the
ledger and validation see the same history. Each replacement goes in this order, and a crash between two steps is
safe:

1. The successor is written through the snapshot writer (content-addressed; `supersedes: <old>` in its manifest,
   written last). It is not listed yet: every reader still sees the old snapshot.
2. The successor inherits the old snapshot's ledger entry (`ledger.inherit`: trained stays trained, so no cycle
   takes it for new data).
3. The ledger records the replacement (`ledger/superseded/<old>.json`, written once): the commit point. From here
   the snapshot listings, `latest`, the cycle's pending and replay snapshots and the old id itself all give the
   successor; `postgame lineage` of a model trained on the old one says "superseded by <id> (redacted on <date>)".
4. The old snapshot's objects are deleted (its manifest last), and a local cached copy of its data.

A re-run finds a half-done replacement and completes it: before 3 the successor is rebuilt to the same bytes and
id (no second one; a successor left by a run of other code, whose id differs, is deleted once the new one is
recorded); after 3 it finishes the deletion. A replacement already complete is nothing to do. A snapshot a live
cycle holds (a claim) is refused: that cycle is reading it.

Secrets never reach the output: findings name the snapshot, the record count, fields and kinds of secret.
"""

from __future__ import annotations

import io
import logging
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from postgame.config import Config
from postgame.errors import PostgameError, SnapshotBusy
from postgame.ingest import snapshot as snap
from postgame.ingest.audit import Finding, audit_snapshot, clean
from postgame.ingest.errors import store_errors
from postgame.ingest.redact import redact_text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Replacement:
    """One affected snapshot: what was found and what became of it."""

    snapshot_id: str
    records: int  # data rows with a string to re-redact
    quarantined: int  # quarantine entries with one
    kinds: tuple[str, ...]  # aws_key, github_token, ... (never a value)
    fields: tuple[str, ...]
    successor: str | None = None  # None in a dry run
    done: str = "would replace"  # or "replaced", "completed" (a half-done replacement finished)


@dataclass(frozen=True)
class RedactReport:
    dry_run: bool
    checked: tuple[str, ...]  # the snapshots audited
    replacements: tuple[Replacement, ...] = field(default_factory=tuple)

    @property
    def nothing_to_do(self) -> bool:
        return not self.replacements

    def to_dict(self) -> dict:
        return {
            "dry_run": self.dry_run,
            "checked": list(self.checked),
            "nothing_to_do": self.nothing_to_do,
            "replacements": [asdict(r) for r in self.replacements],
        }

    def text(self) -> str:
        lines = [
            f"{len(self.checked)} snapshot(s) checked: "
            + ("nothing to do" if self.nothing_to_do else f"{len(self.replacements)} to replace")
            + (" (dry run: nothing written)" if self.dry_run else "")
        ]
        for r in self.replacements:
            arrow = f" -> {r.successor}" if r.successor else ""
            lines.append(f"  {r.done:14s} {r.snapshot_id}{arrow}")
            if r.records or r.quarantined:
                lines.append(
                    f"  {'':14s} {r.records} record(s), {r.quarantined} quarantined line(s): "
                    f"{', '.join(r.kinds) or '-'} in {', '.join(r.fields)}"
                )
        return "\n".join(lines)


def summarize(snapshot_id: str, findings: list[Finding]) -> Replacement:
    """Pure: the audit's findings on one snapshot as a Replacement (counts, kinds, fields; no text)."""
    data = [f for f in findings if not f.field.startswith("quarantine.")]
    return Replacement(
        snapshot_id=snapshot_id,
        records=len({f.row for f in data}),
        quarantined=len({f.row for f in findings if f.field.startswith("quarantine.")}),
        kinds=tuple(sorted({k for f in findings for k in f.kinds})),
        fields=tuple(sorted({f.field for f in findings})),
    )


def _cleaned(value, path: str):
    """Every string under `value` (a row's column as `to_pylist` gives it) put through `audit.clean`."""
    if isinstance(value, str):
        return clean(path, value)
    if isinstance(value, dict):
        return {k: _cleaned(v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_cleaned(v, path) for v in value]
    return value


def clean_rows(rows: list[dict]) -> list[dict]:
    """Pure: snapshot rows (`Table.to_pylist()`) with every stored string as today's ingest would store it. The
    lineage columns (object key, line number) are where the record came from: kept."""
    from postgame.contract.arrow import SOURCE_KEY, SOURCE_LINE

    return [
        {k: v if k in (SOURCE_KEY, SOURCE_LINE) or v is None else _cleaned(v, k) for k, v in row.items()}
        for row in rows
    ]


def _write_successor(cfg: Config, store, old: snap.SnapshotManifest) -> tuple[snap.SnapshotManifest, bool]:
    """Step 1: every row group of `old` re-redacted into a successor, committed (unlisted) next to it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from postgame.ingest.catalog import snapshot_file

    settings = cfg.ingest
    seen = pq.read_table(io.BytesIO(store.get(old.seen_index.key)))
    digests = seen.column("digest").to_pylist()
    writer = snap.SnapshotWriter(cfg.home / "tmp", settings.batch_rows, settings.batch_bytes)
    try:
        parquet = pq.ParquetFile(snapshot_file(old.snapshot_id, cfg=cfg))
        at = 0
        for group in range(parquet.num_row_groups):
            table = parquet.read_row_group(group)
            cleaned = pa.Table.from_pylist(clean_rows(table.to_pylist()), schema=table.schema)
            ids = cleaned.column("session_id").to_pylist()  # the dedupe index follows the (redacted) session ids
            writer.add_row_group(cleaned, ids, digests[at : at + len(ids)])
            at += len(ids)
        if at != len(digests):
            raise PostgameError(f"snapshot {old.snapshot_id}: {at} records but {len(digests)} in its dedupe index")
        for entry in snap.read_quarantine(store, old):
            writer.add_quarantine(
                entry.model_copy(update={"text": redact_text(entry.text), "detail": redact_text(entry.detail)})
            )
        successor, written = snap.commit_successor(writer, store, settings.state_prefix, old)
    finally:
        writer.discard()
    if successor.snapshot_id == old.snapshot_id:  # cannot be: the audit found strings that change
        raise PostgameError(f"snapshot {old.snapshot_id}: re-redaction changed nothing")
    return successor, written


def _delete(cfg: Config, store, snapshot_id: str) -> bool:
    """Step 4: the objects of `snapshot_id` (manifest last) and its cached data. True when anything was left."""
    from postgame import ledger

    prefix = snap.snapshot_prefix(cfg.ingest.state_prefix, snapshot_id)
    keys = sorted((info.key for info in store.list(prefix)), key=lambda k: k.endswith("manifest.json"))
    if keys and keys[-1].endswith("manifest.json"):
        manifest = snap.SnapshotManifest.model_validate_json(store.get(keys[-1]))
        (cfg.home / "cache" / "snapshots" / manifest.data.sha256).unlink(missing_ok=True)
    for key in keys:
        store.delete(key)
    ledger.release(cfg, [snapshot_id])  # a dead cycle's claim, if any
    return bool(keys)


def _leftovers(stored: list[snap.SnapshotManifest], record: snap.Supersession) -> list[str]:
    """What a recorded replacement has yet to delete: the old snapshot, and any successor of it that the ledger does
    not name (left by a crashed run of other code)."""
    return [
        m.snapshot_id
        for m in stored
        if m.snapshot_id == record.snapshot_id
        or (m.supersedes == record.snapshot_id and m.snapshot_id != record.superseded_by)
    ]


def _finish(cfg: Config, store, record: snap.Supersession) -> bool:
    """Step 4 of a recorded replacement. True when anything was left to delete."""
    left = _leftovers(snap.stored_manifests(store, cfg.ingest.state_prefix), record)
    for snapshot_id in left:
        _delete(cfg, store, snapshot_id)
    return bool(left)


def _replace(cfg: Config, store, old: snap.SnapshotManifest, found: Replacement) -> Replacement:
    from postgame import ledger
    from postgame.lineage import code_version

    if ledger.claimed(cfg, old.snapshot_id):
        raise SnapshotBusy(
            f"snapshot {old.snapshot_id} is held by a running cycle: run `postgame redact` again once it has ended"
        )
    successor, written = _write_successor(cfg, store, old)
    log.info(
        "redact %s: successor %s %s",
        old.snapshot_id[:12],
        successor.snapshot_id[:12],
        "written" if written else "found",
    )
    ledger.inherit(cfg, old.snapshot_id, successor.snapshot_id)
    record = snap.Supersession(
        snapshot_id=old.snapshot_id,
        superseded_by=successor.snapshot_id,
        at=datetime.now(UTC).isoformat(timespec="seconds"),
        records=found.records,
        quarantined=found.quarantined,
        kinds=list(found.kinds),
        code_version=code_version(),
    )
    store.put(
        snap.supersession_key(cfg.ingest.state_prefix, old.snapshot_id), record.model_dump_json(indent=2).encode()
    )
    log.info("redact %s: replacement recorded", old.snapshot_id[:12])
    _finish(cfg, store, record)
    return Replacement(**{**asdict(found), "successor": successor.snapshot_id, "done": "replaced"})


def remediate(cfg: Config, snapshot_ids: list[str] | None, *, dry_run: bool = False) -> RedactReport:
    """Replace every affected snapshot among `snapshot_ids` (ids or prefixes; None: all) by its re-redacted
    successor, finishing half-done replacements first (see the module docstring). With `dry_run`, only says what it
    would do: nothing is written to the store."""
    from postgame import runtime

    store = runtime.store(cfg)
    prefix = cfg.ingest.state_prefix
    with store_errors(f"redacting snapshots in {store.uri}"):
        replaced = snap.supersessions(store, prefix)
        wanted = None if snapshot_ids is None else [_full_id(store, prefix, replaced, i) for i in snapshot_ids]
        done: list[Replacement] = []
        for record in replaced.values():  # recorded, but a crash may have left objects behind
            if wanted is not None and record.snapshot_id not in wanted:
                continue
            if _leftovers(snap.stored_manifests(store, prefix), record) if dry_run else _finish(cfg, store, record):
                done.append(
                    Replacement(
                        record.snapshot_id,
                        record.records,
                        record.quarantined,
                        tuple(record.kinds),
                        (),
                        successor=record.superseded_by,
                        done="would complete" if dry_run else "completed",
                    )
                )
        counted = snap.manifests(store, prefix)
        if wanted is not None:
            targets = {snap.current_id(replaced, i) for i in wanted}
            counted = [m for m in counted if m.snapshot_id in targets]
        for manifest in counted:
            found = summarize(manifest.snapshot_id, audit_snapshot(manifest.snapshot_id, cfg=cfg))
            if found.records or found.quarantined:
                done.append(found if dry_run else _replace(cfg, store, manifest, found))
    return RedactReport(dry_run=dry_run, checked=tuple(m.snapshot_id for m in counted), replacements=tuple(done))


def _full_id(store, prefix: str, replaced: dict[str, snap.Supersession], snapshot_id: str) -> str:
    """A snapshot id or unique prefix (of a counted snapshot or a replaced one) as a full id."""
    candidates = {m.snapshot_id for m in snap.manifests(store, prefix)} | set(replaced)
    matches = [i for i in candidates if i.startswith(snapshot_id)] if len(snapshot_id) >= 6 else []
    if len(matches) == 1:
        return matches[0]
    if snapshot_id == "latest":
        return snap.resolve(store, prefix, "latest").snapshot_id
    raise PostgameError(
        f"snapshot id {snapshot_id!r} is ambiguous: {len(matches)} snapshots start with it"
        if matches
        else f"no snapshot {snapshot_id!r} in {store.uri}/{prefix} (see the output of `postgame ingest`)"
    )
