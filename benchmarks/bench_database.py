"""Prefect and MLflow on SQLite and on PostgreSQL (`stack.database`), side by side in one run (BENCHMARKS.md,
"Database backends"; docs/database.md).

    nice .venv/bin/python benchmarks/bench_database.py [--clients 8] [--tasks 12] [--queries 30] [--json]

For each backend, a fresh home and free loopback ports: `postgame up` of MLflow and Prefect (infra.stack.up; with
postgres the local server first), then three measurements through the servers' REST APIs:

1. Load of the services tests' shape: `--clients` concurrent clients, each one flow run: create it, RUNNING, `--tasks`
   task runs (created, RUNNING, COMPLETED), a batch of log lines per task, COMPLETED; and an MLflow run with a batch
   of params and metrics. Every answer 503 (and every other failure) is counted, then the request is retried the way
   Prefect's client and tests/support.rest_json do (up to 6 tries, exponential wait): the count is what the retries
   hide.
2. The load's wall time: the proxy named for a cycle's wall time. A cycle's database traffic is of this kind; the rest
   of a cycle (training, grading) does not touch the database and costs the same on both.
3. The flow-run page's queries for one run of the load: POST /api/flow_runs/filter, /api/task_runs/filter and
   /api/logs/filter, each `--queries` times, one after the other on an idle server: median and 90th percentile.

Core count and load average are printed with the numbers: on a shared machine other work slows both columns alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from infra.stack import down, up
from tests.support import forget_database, free_port, make_config

BACKENDS = ("sqlite", "postgres")


@dataclass
class Counts:
    requests: int = 0
    answered_503: int = 0
    other_failures: int = 0
    gave_up: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, failure: str = "", **deltas: int) -> None:
        with self.lock:
            if failure:
                self.failures[failure] = self.failures.get(failure, 0) + 1
            for name, delta in deltas.items():
                setattr(self, name, getattr(self, name) + delta)


@dataclass
class Result:
    backend: str
    up_s: float
    load_s: float
    prefect_requests: int
    prefect_503: int
    prefect_other_failures: int
    mlflow_requests: int
    mlflow_5xx: int
    gave_up: int
    failed_clients: int
    failures: dict[str, int]
    latency_ms: dict[str, dict[str, float]]


def call(client: httpx.Client, counts: Counts, method: str, url: str, body=None):
    """One request, retried on 503 / connection errors as the clients do; every failed try is counted."""
    for attempt in range(6):
        counts.add(requests=1)
        try:
            resp = client.request(method, url, json=body, timeout=60)
        except httpx.HTTPError as exc:
            counts.add(type(exc).__name__, other_failures=1)
        else:
            if resp.status_code < 300:
                return resp.json() if resp.content else {}
            if resp.status_code == 503:
                counts.add(answered_503=1)
            else:
                counts.add(f"{resp.status_code} {url.rsplit('/api', 1)[-1]}", other_failures=1)
                if resp.status_code < 500:
                    break  # a refusal, not a busy server: no retry
        time.sleep(0.25 * 2**attempt)
    counts.add(gave_up=1)
    return None


def now() -> str:
    return datetime.now(UTC).isoformat()


class GaveUp(Exception):
    pass


def need(answer):
    if answer is None:
        raise GaveUp
    return answer


def one_client(i: int, prefect: str, mlflow: str, flow_id: str, tasks: int, pc: Counts, mc: Counts) -> str | None:
    """One flow run and one MLflow run; None when a request that the rest needs gave up (counted, not fatal)."""
    try:
        return _one_client(i, prefect, mlflow, flow_id, tasks, pc, mc)
    except GaveUp:
        return None


def _one_client(i: int, prefect: str, mlflow: str, flow_id: str, tasks: int, pc: Counts, mc: Counts) -> str:
    with httpx.Client() as http:
        run = need(call(http, pc, "POST", f"{prefect}/flow_runs/", {"flow_id": flow_id, "name": f"bench-{i}"}))
        run_id = run["id"]
        call(http, pc, "POST", f"{prefect}/flow_runs/{run_id}/set_state", {"state": {"type": "RUNNING"}})
        for k in range(tasks):
            body = {"flow_run_id": run_id, "task_key": f"stage-{k}", "dynamic_key": "0", "name": f"stage-{k}-0"}
            task = need(call(http, pc, "POST", f"{prefect}/task_runs/", body))
            for state in ("RUNNING", "COMPLETED"):
                call(http, pc, "POST", f"{prefect}/task_runs/{task['id']}/set_state", {"state": {"type": state}})
            logs = [
                {"name": "bench", "level": 20, "message": f"line {n}", "timestamp": now(), "flow_run_id": run_id,
                 "task_run_id": task["id"]}
                for n in range(5)
            ]  # fmt: skip
            call(http, pc, "POST", f"{prefect}/logs/", logs)
        call(http, pc, "POST", f"{prefect}/flow_runs/{run_id}/set_state", {"state": {"type": "COMPLETED"}})
        ml = need(call(http, mc, "POST", f"{mlflow}/runs/create", {"experiment_id": "0", "run_name": f"bench-{i}"}))
        ml_id = ml["run"]["info"]["run_id"]
        stamp = int(time.time() * 1000)
        metrics = [{"key": f"m{k}", "value": k / 10, "timestamp": stamp, "step": 0} for k in range(tasks)]
        params = [{"key": f"p{k}", "value": str(k)} for k in range(tasks)]
        call(http, mc, "POST", f"{mlflow}/runs/log-batch", {"run_id": ml_id, "metrics": metrics, "params": params})
        call(http, mc, "POST", f"{mlflow}/runs/update", {"run_id": ml_id, "status": "FINISHED"})
    return run_id


def latency(prefect: str, run_id: str, n: int) -> dict[str, dict[str, float]]:
    """The flow-run page's three queries for one run, `n` times each."""
    queries = {
        "flow_runs/filter": {"flow_runs": {"id": {"any_": [run_id]}}},
        "task_runs/filter": {"flow_runs": {"id": {"any_": [run_id]}}, "sort": "EXPECTED_START_TIME_DESC"},
        "logs/filter": {"logs": {"flow_run_id": {"any_": [run_id]}}, "sort": "TIMESTAMP_ASC", "limit": 200},
    }
    out = {}
    with httpx.Client() as http:
        for name, body in queries.items():
            times = []
            for _ in range(n):
                started = time.perf_counter()
                http.post(f"{prefect}/{name}", json=body, timeout=60).raise_for_status()
                times.append((time.perf_counter() - started) * 1000)
            times.sort()
            out[name] = {"median": statistics.median(times), "p90": times[int(0.9 * (len(times) - 1))]}
    return out


def measure(backend: str, clients: int, tasks: int, queries: int, root: Path) -> Result:
    home = root / backend
    home.mkdir()
    stack = {"start_timeout_s": 300, "database": backend, "postgres_port": free_port()}
    cfg = make_config(home, stack=stack)
    started = time.monotonic()
    up(cfg, only=("mlflow", "prefect"), log=lambda *_: None)
    up_s = time.monotonic() - started
    try:
        prefect = f"http://{cfg.stack.host}:{cfg.stack.prefect_port}/api"
        mlflow = f"http://{cfg.stack.host}:{cfg.stack.mlflow_port}/api/2.0/mlflow"
        pc, mc = Counts(), Counts()
        with httpx.Client() as http:
            flow_id = call(http, pc, "POST", f"{prefect}/flows/", {"name": "bench-cycle"})["id"]
        started = time.monotonic()
        with ThreadPoolExecutor(clients) as pool:
            run_ids = list(pool.map(lambda i: one_client(i, prefect, mlflow, flow_id, tasks, pc, mc), range(clients)))
        load_s = time.monotonic() - started
        done = [r for r in run_ids if r]
        lat = latency(prefect, done[0], queries) if done else {}
    finally:
        down(cfg, log=lambda *_: None)
        forget_database(cfg)
    return Result(
        backend=backend,
        up_s=round(up_s, 1),
        load_s=round(load_s, 1),
        prefect_requests=pc.requests,
        prefect_503=pc.answered_503,
        prefect_other_failures=pc.other_failures,
        mlflow_requests=mc.requests,
        mlflow_5xx=mc.answered_503 + mc.other_failures,
        gave_up=pc.gave_up + mc.gave_up,
        failed_clients=run_ids.count(None),
        failures={**pc.failures, **{f"mlflow {k}": v for k, v in mc.failures.items()}},
        latency_ms={k: {s: round(v, 1) for s, v in q.items()} for k, q in lat.items()},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent flow runs (and MLflow runs)")
    parser.add_argument("--tasks", type=int, default=12, help="task runs per flow run")
    parser.add_argument("--queries", type=int, default=30, help="repetitions of each flow-run page query")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}  load average {os.getloadavg()[0]:.1f} at start", file=sys.stderr)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-database-") as root:
        for backend in args.backends.split(","):
            results.append(measure(backend, args.clients, args.tasks, args.queries, Path(root)))
            print(f"{backend}: done, load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
        return
    for r in results:
        lat = "  ".join(f"{k} {v['median']:.0f}/{v['p90']:.0f} ms" for k, v in r.latency_ms.items())
        print(
            f"{r.backend:8s} up {r.up_s:5.1f}s  load {r.load_s:5.1f}s  prefect {r.prefect_requests} requests, "
            f"{r.prefect_503} x 503, {r.prefect_other_failures} other failures  mlflow {r.mlflow_requests} requests, "
            f"{r.mlflow_5xx} x 5xx  gave up {r.gave_up} ({r.failed_clients} clients)  {r.failures}  | median/p90 {lat}"
        )


if __name__ == "__main__":
    main()
