"""Events postgame emits to Prefect, so that a deployment trigger can start a cycle when new logs land.

    emit_logs_landed(cfg, source="s3://postgame/agent-logs/", objects=3)   # after new log objects were written/seen
    watch(cfg, once=False, say=print)     # poll the log source, emit when new objects land (`postgame watch`)

The event is `postgame.logs.landed` on the resource `postgame.logs.<registered model>`; the deployment's trigger
(`flows/deploy.py`) matches it. It is sent with one `POST /api/events` before the call returns (Prefect's own
`emit_event` sends from a background worker, which a short command can exit before). Without a Prefect API (no stack)
there is nobody to tell: the call does nothing. Emitting never fails the caller: a lost event is caught up by the
schedule.

The cycles the trigger starts carry a `reason` beginning with `event:`. Prefect's reactive trigger is not evaluated
one event at a time, so one burst can start two runs seconds apart (seen in CI): `burst_leader` names the run that
answers a burst, and a cycle started second ends at once (`tasks/claim.py::answered_by`).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from postgame.config import Config

LOGS_LANDED = "postgame.logs.landed"
EVENT_REASON = "event:"  # how a cycle started by the logs-landed trigger begins its `reason`
log = logging.getLogger(__name__)


def logs_resource(cfg: Config) -> str:
    return f"postgame.logs.{cfg.tracking.registered_model}"


def logs_landed_event(cfg: Config, *, source: str, objects: int) -> dict:
    return {
        "id": str(uuid.uuid4()),
        "occurred": datetime.now(UTC).isoformat(),
        "event": LOGS_LANDED,
        "resource": {"prefect.resource.id": logs_resource(cfg), "postgame.source": source},
        "related": [],
        "payload": {"objects": objects, "source": source},
    }


def emit_logs_landed(cfg: Config, *, source: str, objects: int) -> bool:
    """Tell Prefect that `objects` new log objects landed under `source`. True when Prefect accepted the event."""
    if objects <= 0:
        return False
    import httpx

    from postgame.runtime import prefect_api_url, prefect_auth

    api = prefect_api_url(cfg)
    if not api:
        return False
    try:
        resp = httpx.post(
            f"{api}/events",
            json=[logs_landed_event(cfg, source=source, objects=objects)],
            auth=prefect_auth(cfg),
            timeout=cfg.operate.service_timeout_s,
        )
        resp.raise_for_status()
    except httpx.HTTPError as exc:  # an event is a hint; the schedule catches up when one is lost
        log.warning(
            "could not emit %s (%s: %s); the schedule will pick the logs up", LOGS_LANDED, type(exc).__name__, exc
        )
        return False
    return True


def watch(
    cfg: Config, *, once: bool = False, interval_s: float | None = None, say: Callable[[str], None] = log.info
) -> None:
    """Poll the log source (`ingest.source`) every `interval_s` (default `operate.watch_interval_s`); when log
    objects are new or changed since the last poll that reached Prefect, emit one `postgame.logs.landed` for them.
    What was announced is kept in `<home>/watch.json`, so a restart does not announce it again; an event Prefect did
    not take is tried again at the next poll. Runs until interrupted (or one poll with `once`)."""
    from postgame import runtime
    from postgame.ingest.pipeline import is_log_object
    from postgame.store import split_uri

    source = runtime.log_source(cfg)
    root, prefix = split_uri(source)
    state_path = cfg.home / "watch.json"
    seen: dict[str, str] = json.loads(state_path.read_text()) if state_path.exists() else {}
    while True:
        current = {o.key: o.etag for o in runtime.store(cfg, root).list(prefix) if is_log_object(o.key)}
        new = [k for k, etag in current.items() if seen.get(k) != etag]
        if new:
            sent = emit_logs_landed(cfg, source=source, objects=len(new))
            say(
                f"{len(new)} new log object(s) under {source}: "
                f"{'postgame.logs.landed sent' if sent else 'not sent (no Prefect server); will try again'}"
            )
            if sent:
                seen.update(current)
                state_path.write_text(json.dumps(seen, sort_keys=True))
        if once:
            return
        time.sleep(interval_s or cfg.operate.watch_interval_s)


def burst_leader(runs: Iterable[tuple[datetime, str]], run_id: str, window_s: float) -> str:
    """The run that answers the burst `run_id` belongs to, from the event-started runs (created, id) of one
    deployment: in creation order, a run leads a burst unless a leader was created at most `window_s` before it.
    Returns `run_id` itself when it leads."""
    leader: tuple[datetime, str] | None = None
    for created, rid in sorted(runs):
        if leader is None or (created - leader[0]).total_seconds() > window_s:
            leader = (created, rid)
        if rid == run_id:
            return leader[1]
    raise ValueError(f"flow run {run_id} is not among the runs given")
