"""The deployment of the continuous cycle: its name, schedule, one-at-a-time limit, event trigger and parameters.

    postgame serve               # a long-running process that registers the deployment and runs its flow runs
    postgame up --serve          # the same, as a service of the local stack
    prefect deploy --all         # the same deployment on a work pool (prefect.yaml; see docs/operation.md)

The deployment is `continuous-cycle/<operate.deployment>` and shows in the Prefect UI's Deployments page, where its
schedule can be edited and paused. What starts a run:

- the cron schedule `operate.schedule_cron`;
- `POST /api/deployments/{id}/create_flow_run` (or `postgame trigger`), with parameters and an idempotency key;
- the event `postgame.logs.landed` (emitted by ingest, the traffic simulator and `postgame watch`): a reactive trigger
  with `threshold=1` and `within=operate.event_debounce_s` fires on the first event of a burst and ignores the rest
  of the window, so a burst starts one cycle (when Prefect fires twice for one burst, the second run is debounced by
  the cycle itself: `tasks/claim.py::answered_by`).

One cycle at a time: the deployment's concurrency limit is 1; a run that arrives while one runs waits
(`operate.concurrency: enqueue`, Prefect's ENQUEUE) or is cancelled (`refuse`, CANCEL_NEW). Snapshots are also
claimed by the cycle that works on them (`postgame.ledger.claim`), so a cycle started outside the deployment
(`postgame cycle`) never trains on the same snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from postgame import runtime
from postgame.config import Config
from postgame.errors import PostgameError, ServiceUnavailable, TriggerError
from postgame.events import LOGS_LANDED, logs_resource

FLOW_NAME = "continuous-cycle"


def deployment_name(cfg: Config) -> str:
    return f"{FLOW_NAME}/{cfg.operate.deployment}"


def concurrency(cfg: Config):
    from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy

    strategy = (
        ConcurrencyLimitStrategy.ENQUEUE
        if cfg.operate.concurrency == "enqueue"
        else ConcurrencyLimitStrategy.CANCEL_NEW
    )
    return ConcurrencyLimitConfig(limit=1, collision_strategy=strategy)


def parameters(config_path: str | None, reason: str = "schedule") -> dict:
    return {"config_path": str(Path(config_path).absolute()) if config_path else None, "reason": reason}


def logs_landed_trigger(cfg: Config, config_path: str | None):
    """A burst of `postgame.logs.landed` events within `event_debounce_s` starts one cycle."""
    from prefect.events import DeploymentEventTrigger

    return DeploymentEventTrigger(
        name="new production logs",
        expect={LOGS_LANDED},
        match={"prefect.resource.id": logs_resource(cfg)},
        posture="Reactive",
        threshold=1,
        within=timedelta(seconds=cfg.operate.event_debounce_s),
        parameters=parameters(config_path, reason="event: {{ event.payload.objects }} new log objects"),
    )


def to_deployment(cfg: Config, config_path: str | None):
    """The RunnerDeployment `postgame serve` registers (composition only: every value comes from the config)."""
    from flows.cycle import continuous_cycle

    return continuous_cycle.to_deployment(
        name=cfg.operate.deployment,
        cron=cfg.operate.schedule_cron or None,
        concurrency_limit=concurrency(cfg),
        triggers=[logs_landed_trigger(cfg, config_path)] if cfg.operate.event_trigger else [],
        parameters=parameters(config_path),
        description="One continuous-training cycle: ingest → validate → curate → train → evaluate → promote.",
        tags=["postgame", cfg.tracking.registered_model],
    )


def client_settings(cfg: Config) -> dict:
    """Prefect client settings for the stack's API (with the basic-auth string when auth is on)."""
    from prefect.settings import PREFECT_API_AUTH_STRING, PREFECT_API_URL, PREFECT_SERVER_ANALYTICS_ENABLED

    api = runtime.resolve(cfg, refresh=True).prefect_api_url
    if not api:
        raise PostgameError("no Prefect server: a deployment needs the stack (`postgame up`)")
    auth = runtime.prefect_auth(cfg)
    return {
        PREFECT_API_URL: api,
        PREFECT_SERVER_ANALYTICS_ENABLED: False,
        **({PREFECT_API_AUTH_STRING: ":".join(auth)} if auth else {}),
    }


def serve(cfg: Config, config_path: str | None, *, webserver: bool = False) -> None:
    """Register the deployment and run its flow runs until stopped (SIGTERM/Ctrl-C). `webserver`: the runner's
    /health on PREFECT_RUNNER_SERVER_HOST/PORT (read from the environment at start; `postgame up --serve` sets them)."""
    from prefect import serve as prefect_serve

    from flows.cycle import process_wide_settings
    from tasks.resume import save_result_storage

    # flow runs are subprocesses of the runner: they find the API (and the auth string) in the environment
    with process_wide_settings(client_settings(cfg)):
        save_result_storage(cfg)
        prefect_serve(to_deployment(cfg, config_path), pause_on_shutdown=False, webserver=webserver)


# --- reading it back: postgame status / trigger ---------------------------------------------------------------------


@dataclass
class RunInfo:
    id: str
    name: str
    state: str
    start_time: str | None
    reason: str
    url: str


@dataclass
class DeploymentInfo:
    id: str
    name: str
    schedules: list[str]
    paused: bool
    concurrency: str
    url: str
    last_runs: list[RunInfo] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def api_url(cfg: Config) -> str | None:
    """The stack's Prefect API as `postgame up` recorded it (no probing of the other services: status stays quick)."""
    prefect = ((runtime.recorded_stack(cfg) or {}).get("services") or {}).get("prefect")
    return prefect["url"] + "/api" if prefect else None


def _api(cfg: Config):
    import httpx

    api = api_url(cfg)
    if not api:
        raise PostgameError("no Prefect server: start the stack with `postgame up --serve`")
    return httpx.Client(base_url=api + "/", auth=runtime.prefect_auth(cfg), timeout=cfg.operate.service_timeout_s)


def _ui(cfg: Config) -> str:
    return (api_url(cfg) or "").removesuffix("/api")


def deployment_info(cfg: Config, *, runs: int = 5) -> DeploymentInfo | None:
    """The deployment as the Prefect server has it (None when nobody has served it yet), with its last runs."""
    with _api(cfg) as api:
        resp = api.get(f"deployments/name/{deployment_name(cfg)}")
        if resp.status_code == 404:
            return None
        resp.raise_for_status()
        dep = resp.json()
        flow_runs = api.post(
            "flow_runs/filter",
            json={  # runs that started or wait to (not the future schedule)
                "deployments": {"id": {"any_": [dep["id"]]}},
                "sort": "EXPECTED_START_TIME_DESC",
                "limit": runs,
                "flow_runs": {"expected_start_time": {"before_": datetime.now(UTC).isoformat()}},
            },
        )
        flow_runs.raise_for_status()
    ui = _ui(cfg)
    schedules = [s["schedule"].get("cron") or str(s["schedule"]) for s in dep.get("schedules", [])]
    limit = (dep.get("global_concurrency_limit") or {}).get("limit") or dep.get("concurrency_limit")
    options = dep.get("concurrency_options") or {}
    return DeploymentInfo(
        id=dep["id"],
        name=deployment_name(cfg),
        schedules=schedules,
        paused=bool(dep.get("paused")),
        concurrency=f"{limit} ({options.get('collision_strategy', 'ENQUEUE')})" if limit else "none",
        url=f"{ui}/deployments/deployment/{dep['id']}",
        last_runs=[
            RunInfo(
                id=r["id"],
                name=r["name"],
                state=r.get("state_name") or r.get("state_type") or "",
                start_time=r.get("start_time") or r.get("expected_start_time"),
                reason=(r.get("parameters") or {}).get("reason", ""),
                url=f"{ui}/runs/flow-run/{r['id']}",
            )
            for r in flow_runs.json()
        ],
    )


ACTIVE = ("RUNNING", "PENDING", "CANCELLING")


def trigger(cfg: Config, *, reason: str, idempotency_key: str | None = None) -> RunInfo:
    """Start a cycle through the deployment (the REST call docs/operation.md's curl makes). With `operate.concurrency:
    refuse` and a cycle already running, raise instead of queueing.

    A Prefect server that is unreachable or answers 5xx/429 is asked again (`operate.retries` times, backoff from
    `operate.retry_delay_s` with jitter, each wait at most `operate.service_timeout_s`) with the same idempotency key
    (one is made when none is given), so a retry whose first try did reach the server never starts a second cycle.
    Anything else (no deployment, 404, 422) fails at once."""
    import uuid

    from tasks.retry import backoff_delays, call_with_retries

    key = idempotency_key or f"postgame-trigger-{uuid.uuid4()}"
    op = cfg.operate
    delays = backoff_delays(op.retries, op.retry_delay_s, op.service_timeout_s)
    try:
        info = call_with_retries(lambda: deployment_info(cfg, runs=10), delays=delays)
        if info is None:
            raise TriggerError(
                f"no deployment {deployment_name(cfg)!r} on the Prefect server: start it with "
                f"`postgame serve` (or `postgame up --serve`)"
            )
        active = [r for r in info.last_runs if r.state.upper() in ACTIVE or r.state == "Running"]
        if op.concurrency == "refuse" and active:
            raise TriggerError(
                f"refused: cycle {active[0].name} ({active[0].id}) is {active[0].state.lower()}; "
                f"operate.concurrency is 'refuse' (set 'enqueue' to queue this one after it)"
            )
        run = call_with_retries(lambda: _create_flow_run(cfg, info.id, reason, key), delays=delays)
    except Exception as exc:  # an HTTP failure becomes one line naming what to do; anything else goes on as it is
        failure = _trigger_failure(cfg, exc, tries=len(delays) + 1)
        if failure is exc:
            raise
        raise failure from exc
    return RunInfo(
        id=run["id"],
        name=run["name"],
        state=run.get("state_name") or "Scheduled",
        start_time=run.get("expected_start_time"),
        reason=reason,
        url=f"{_ui(cfg)}/runs/flow-run/{run['id']}",
    )


FINAL = ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")


def wait_for_run(
    cfg: Config,
    run_id: str,
    *,
    on_tasks: Callable[[list[str]], None] | None = None,
    poll_s: float = 2.0,
) -> dict:
    """Wait until a flow run of the deployment ends; return it as the API has it (`state_type`, `state_name`,
    `state.message`). `on_tasks(names)` is told the names of its completed task runs at each poll (a progress bar).
    Raises ServiceUnavailable when the deployment's runner stops serving while the run has not ended (the run would
    wait for ever), naming its log."""
    import time

    from infra.stack import RUNNER, healthy

    runner = ((runtime.recorded_stack(cfg) or {}).get("services") or {}).get(RUNNER) or {}
    misses = 0  # consecutive polls the runner did not answer: a busy moment is not a dead runner
    with _api(cfg) as api:
        while True:
            run = api.get(f"flow_runs/{run_id}").raise_for_status().json()
            if on_tasks is not None:
                tasks = api.post(
                    "task_runs/filter",
                    json={
                        "flow_runs": {"id": {"any_": [run_id]}},
                        "task_runs": {"state": {"type": {"any_": ["COMPLETED"]}}},
                    },
                )
                on_tasks([t["name"] for t in tasks.raise_for_status().json()])
            if run["state_type"] in FINAL:
                return run
            misses = misses + 1 if runner.get("url") and not healthy(runner["url"] + "/health") else 0
            if misses >= 3:
                raise ServiceUnavailable(
                    f"the deployment's runner stopped serving while flow run {run['name']} was {run['state_name']}: "
                    f"see {cfg.home / 'logs' / f'{RUNNER}.log'}; start it again with `postgame up --serve`",
                    service=RUNNER,
                )
            time.sleep(poll_s)


def _create_flow_run(cfg: Config, deployment_id: str, reason: str, key: str) -> dict:
    with _api(cfg) as api:
        resp = api.post(
            f"deployments/{deployment_id}/create_flow_run",
            json={"parameters": {"reason": reason}, "idempotency_key": key},
        )
        resp.raise_for_status()
        return resp.json()


def _trigger_failure(cfg: Config, exc: Exception, *, tries: int) -> Exception:
    """The error `postgame trigger` ends with: transient after every retry → ServiceUnavailable; an HTTP answer the
    server will give again → TriggerError with its status and detail; anything else unchanged."""
    import httpx

    from tasks.retry import is_transient

    if isinstance(exc, PostgameError):
        return exc
    where = f"the Prefect server at {api_url(cfg)}"
    if is_transient(exc):
        what = (
            f"answered {exc.response.status_code} {exc.response.reason_phrase}"
            if isinstance(exc, httpx.HTTPStatusError)
            else f"could not be reached ({type(exc).__name__})"
        )
        return ServiceUnavailable(
            f"{where} {what} on {tries} tries: start the stack with `postgame up --serve` (its "
            f"log: {cfg.home / 'logs' / 'prefect.log'}) and trigger again",
            service="prefect",
        )
    if isinstance(exc, httpx.HTTPStatusError):
        detail = " ".join(exc.response.text.split())[:200]
        return TriggerError(
            f"{where} rejected {exc.request.method} {exc.request.url.path} with "
            f"{exc.response.status_code} {exc.response.reason_phrase}: {detail or 'no detail'}"
        )
    return exc
