"""Commands of the ingest stage.

    postgame ingest [--source URI] [--json]                         # read new log objects into a snapshot
    postgame ingest --watch [--interval S]                          # poll ingest.source, emit postgame.logs.landed
    postgame quarantine ls [--snapshot ID] [--reason R] [--json]    # lines set aside, one per row
    postgame quarantine show ENTRY [--json]                         # one of them, redacted text included
    postgame redact --snapshot ID | --all [--dry-run] [--json]      # replace snapshots holding secrets in clear

Bad data never fails a command: it is counted and quarantined. A store that cannot be reached prints one line
(`error: StoreError: ...`) and exits 1.
"""

from __future__ import annotations

import json

import typer

quarantine_app = typer.Typer(no_args_is_help=True, help="Inspect the log lines that ingest set aside, and why.")


def _echo_json(obj) -> None:
    typer.echo(json.dumps(obj, indent=2, sort_keys=True, default=str))


def ingest(
    source: str | None = typer.Option(
        None, "--source", help="Logs to read: a folder or s3://bucket/prefix (default: ingest.source)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object with the counts."),
    watch: bool = typer.Option(
        False,
        "--watch",
        help="Read nothing now: poll ingest.source and emit "
        "postgame.logs.landed when new log objects land (the "
        "deployment's cycle then ingests them), as `postgame "
        "watch` does.",
    ),
    interval: float | None = typer.Option(
        None, "--interval", min=0.1, help="With --watch: seconds between polls (operate.watch_interval_s)."
    ),
) -> None:
    """Read new production-log objects into an immutable snapshot; re-running reads nothing twice.

    While it reads, a spinner with the objects read so far on stderr (on a terminal, without --json)."""
    from postgame import runtime
    from postgame.console import progress_bar
    from postgame.events import emit_logs_landed
    from postgame.events import watch as watch_source
    from postgame.ingest.lines import REASONS
    from postgame.ingest.pipeline import run_ingest

    cfg = runtime.current_config()
    if watch:
        if source or as_json:
            raise typer.BadParameter("--watch polls ingest.source and prints a line per poll: no --source or --json")
        watch_source(cfg, interval_s=interval, say=typer.echo)
        return
    with progress_bar("ingest", None, enabled=not as_json) as tell:
        summary = run_ingest(source or runtime.log_source(cfg), cfg=cfg, progress=tell)
    emit_logs_landed(cfg, source=source or runtime.log_source(cfg), objects=summary.objects_read)  # a cycle learns it
    if as_json:
        _echo_json(summary.cli_dict())
        return
    if summary.snapshot_id is None:
        typer.echo(f"nothing new: {summary.objects_skipped} objects skipped (already read or not logs)")
        return
    q = summary.quarantined
    typer.echo(f"snapshot    {summary.snapshot_id}\n            {summary.snapshot_uri}")
    typer.echo(
        f"objects     {summary.objects_read} read, {summary.objects_skipped} skipped, "
        f"{len(summary.corrupt_objects)} corrupt"
    )
    typer.echo(f"records     {summary.records_ingested} ingested, {summary.duplicates} duplicates")
    trajectory = "".join(f", {reason} {q[reason]}" for reason in REASONS[3:] if q.get(reason))  # version 2 only
    typer.echo(
        f"quarantined {sum(q.values())} (parse {q['parse']}, schema {q['schema']}, too_large {q['too_large']}"
        f"{trajectory})"
        + (f": postgame quarantine ls --snapshot {summary.snapshot_id[:12]}" if sum(q.values()) else "")
    )
    for bad in summary.corrupt_objects:
        typer.echo(
            f"corrupt     {bad.key}: {bad.detail} ({bad.records_kept} records kept; it will be read again once fixed)"
        )


@quarantine_app.command("ls")
def quarantine_ls(
    snapshot: str | None = typer.Option(None, "--snapshot", help="Only this snapshot (id, prefix or latest)."),
    reason: str | None = typer.Option(
        None,
        "--reason",
        help="Only this reason: parse, schema, too_large, orphan_tool_message or message_order (tool_arguments: before 2026-12-07).",
    ),
    as_json: bool = typer.Option(False, "--json", help="One JSON list."),
) -> None:
    """List quarantined lines: entry, reason, object key:line, detail."""
    from postgame import runtime
    from postgame.errors import PostgameError
    from postgame.ingest.catalog import entry_name, quarantine_entries
    from postgame.ingest.lines import REASONS

    if reason is not None and reason not in REASONS:
        raise PostgameError(f"--reason {reason!r}: allowed are {', '.join(REASONS)}")
    rows = [
        (entry_name(m, e), e)
        for m, e in quarantine_entries(cfg=runtime.current_config(), snapshot_id=snapshot, reason=reason)
    ]
    if as_json:
        _echo_json([{"entry": name, **e.model_dump(exclude={"text"})} for name, e in rows])
        return
    for name, e in rows:
        typer.echo(f"{name:18s} {e.reason:9s} {e.object_key}:{e.line}  {e.detail}")
    typer.echo(f"{len(rows)} quarantined line(s); `postgame quarantine show ENTRY` prints one")


@quarantine_app.command("show")
def quarantine_show(
    entry: str = typer.Argument(..., help="An entry as `quarantine ls` prints it: <snapshot>:<n>."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object."),
) -> None:
    """Print one quarantined line: where it came from, why it was set aside, and its (redacted) text."""
    from postgame import runtime
    from postgame.ingest.catalog import entry_name, quarantine_entry

    manifest, e = quarantine_entry(entry, cfg=runtime.current_config())
    if as_json:
        _echo_json({"entry": entry_name(manifest, e), "snapshot_id": manifest.snapshot_id, **e.model_dump()})
        return
    typer.echo(f"entry    {entry_name(manifest, e)}  (snapshot {manifest.snapshot_id})")
    typer.echo(f"object   {e.object_key}  (etag {e.etag}), line {e.line}, {e.bytes} bytes")
    typer.echo(f"reason   {e.reason}: {e.detail}")
    typer.echo(f"text{'     (cut)' if e.truncated else ''}\n{e.text}")


def redact(
    snapshot: list[str] | None = typer.Option(
        None,
        "--snapshot",
        help="A snapshot id or prefix (repeat for several); a replaced one has its clean-up finished.",
    ),
    every: bool = typer.Option(False, "--all", help="Every snapshot in the store."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be replaced; write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Replace each snapshot holding text today's redaction would change (secrets stored in clear by an older
    ingest) by a re-redacted successor, record the replacement in the ledger, then delete the old one. Later cycles,
    `latest` and lineage read the successor. Idempotent; a crash half-way is finished by a re-run. See docs/redact.md."""
    from postgame import runtime
    from postgame.ingest.remediate import remediate

    if bool(snapshot) == every:
        raise typer.BadParameter("give --snapshot ID (one or more) or --all")
    report = remediate(runtime.current_config(), None if every else list(snapshot or []), dry_run=dry_run)
    if as_json:
        _echo_json(report.to_dict())
    else:
        typer.echo(report.text())


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
    app.command("redact")(redact)
    app.add_typer(quarantine_app, name="quarantine")
