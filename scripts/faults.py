"""The fault suite: real faults staged against the real local stack, each followed by what a user would do next, and
the state checked afterwards. Prints one table (what BENCHMARKS.md holds).

    python scripts/faults.py [--home DIR] [--keep-up]        # ~40-60 min on 2 busy cores

One stack (`postgame up --serve`), one small task world, traffic, a baseline cycle; then a trained champion at stake:
the base registered as the first champion and the shipped agent base (`models/base_agent/`, fine-tuned from
`models/base/`) registered as a new version and made champion by a recorded move (`registry.move_champion`, why
"fault suite: a trained champion at stake"). Then, in order:

1. the object store (SeaweedFS) killed while ingest runs and left down until the cycle gives up; back; re-run;
2. MLflow killed while the candidate is registered: the cycle ends with one line; MLflow back; the re-run resumes;
3. the worker SIGKILLed during training, then the cycle re-run: same training run (folder), earlier stages cached;
4. the same cycle triggered twice at once (`flows.deploy.trigger` from two threads): one after the other, never both;
5. the Prefect server killed during training and started again at once; the cycle re-run if it failed;
6. `postgame agent replay` SIGKILLed (its process group) mid-episode, during a sandboxed `bash` step; re-run;
7. PostgreSQL (Prefect's and MLflow's database) SIGKILLed during training and started again as `up` starts it; the
   cycle re-run if it failed. On a stack of its own (`<home>/postgres-stack`, `stack.database: postgres`; the rows
   above run on SQLite), set up as the first one is: same world, traffic, baseline cycle and staked champion.

After each: records (snapshot rows) and unique sessions, log objects not read by any snapshot (lost), rows minus
unique sessions (duplicated), and the champion — which must name a complete, loadable version, and be the champion
before or one reached by a recorded move (the registry's `champion.move.*` history, not only the alias).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"] = "false"

SMALL_WORLD = {
    "factory": {
        "projects": ["textkit", "intervals", "ledger", "semver"],
        "instances_per_project": 2,
        "candidates_per_project": 8,
        "split_projects": {"eval": ["semver"], "holdout": ["ledger"]},
    },
    "policy": {"max_new_tokens": 16, "max_prompt_tokens": 512},
    "train": {"max_steps": 1, "batch_size": 4, "num_generations": 4, "max_prompts": 2},
    "promote": {"eval_instances": 2},
    "eval": {"timeout_s": 30},
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_block(size: int = 7) -> int:
    import random

    for _ in range(200):
        base = random.randrange(20000, 60000)
        try:
            socks = []
            for i in range(size):
                s = socket.socket()
                s.bind(("127.0.0.1", base + i))
                socks.append(s)
            for s in socks:
                s.close()
            return base
        except OSError:
            for s in socks:
                s.close()
    raise RuntimeError("no free port block")


@dataclass
class State:
    records: int
    unique_sessions: int
    objects: int
    objects_read: int
    champion: str | None
    champion_ok: bool
    train_runs: int
    moves: list = field(default_factory=list)  # registry.champion_history: every recorded champion move


@dataclass
class Rerun:
    status: str
    cached: list[str]
    error: str
    seconds: float

    def summary(self) -> str:
        return (
            f"re-run {self.status}{': ' + self.error if self.error else ''} in {self.seconds:.0f}s, cached: "
            f"{','.join(self.cached) or 'none'}"
        )


@dataclass
class Outcome:
    fault: str
    outcome: str
    before: State
    after: State
    error: str = ""
    notes: list[str] = field(default_factory=list)


class Suite:
    def __init__(self, home: Path, database: str = "sqlite", *, skip_setup: bool = False, keep_up: bool = False):
        self.home = home
        self.cfg_path = home / "postgame.yaml"
        self.skip_setup, self.keep_up = skip_setup, keep_up
        data = {
            "home": str(home),
            **SMALL_WORLD,
            "stack": {
                "prefect_port": free_port(),
                "mlflow_port": free_port(),
                "s3_port": free_port(),
                "weed_port_base": free_block(),
                "start_timeout_s": 300,
                "database": database,
                **({"postgres_port": free_port()} if database == "postgres" else {}),
            },
            # the faults start their own cycles: traffic must not start one through the event trigger
            "operate": {"runner_port": free_port(), "service_timeout_s": 20, "event_trigger": False},
            "agent": {"enabled": False},  # the pipeline's faults, around a policy that answers once (as the tests)
        }
        home.mkdir(parents=True, exist_ok=True)
        if self.cfg_path.exists():  # an earlier run's home: its world and ports are reused
            data = yaml.safe_load(self.cfg_path.read_text())
            data.setdefault("operate", {})["event_trigger"] = False
        self.cfg_path.write_text(yaml.safe_dump(data))
        from postgame.config import load_config

        self.cfg = load_config(self.cfg_path, env={})
        self.api = f"http://127.0.0.1:{self.cfg.stack.prefect_port}/api"

    # --- running things ---------------------------------------------------------------------------------------------
    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTGAME_", "PREFECT_", "MLFLOW_"))}
        env["PYTHONPATH"] = str(ROOT)
        return env

    def cli(self, *args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "postgame", "--config", str(self.cfg_path), *args],
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=timeout,
            cwd=ROOT,
        )

    def start_cycle(self) -> subprocess.Popen:
        log = open(self.home / "logs" / f"fault-cycle-{time.time():.0f}.log", "w")
        return subprocess.Popen(
            [sys.executable, "-m", "postgame", "--config", str(self.cfg_path), "cycle", "--json"],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=self.env(),
            cwd=ROOT,
            start_new_session=True,
        )

    def post(self, path: str, body: dict):
        import httpx

        return httpx.post(f"{self.api}/{path}", json=body, timeout=30).raise_for_status().json()

    def wait_task(self, stage: str, since: float, timeout: float = 1200, proc: subprocess.Popen | None = None) -> bool:
        """Until a task run of `stage` created after `since` is RUNNING (polled every 0.2 s); False when `proc` (the
        cycle) ends first."""
        from datetime import UTC, datetime

        after = datetime.fromtimestamp(since, UTC).isoformat()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (proc is None or proc.poll() is None):
            try:
                runs = self.post(
                    "task_runs/filter",
                    {"task_runs": {"name": {"like_": stage}, "start_time": {"after_": after}}, "limit": 10},
                )
            except Exception:  # noqa: BLE001 - the API may be the thing that is down
                runs = []
            if any(r["name"].startswith(stage + "-") and r["state_type"] == "RUNNING" for r in runs):
                return True
            time.sleep(0.2)
        return False

    def pid(self, service: str) -> int:
        return json.loads((self.home / "stack.json").read_text())["services"][service]["pid"]

    def kill(self, service: str) -> None:
        os.killpg(self.pid(service), signal.SIGKILL)

    def restart(self, service: str) -> None:
        from infra.stack import _start, service_specs

        state = json.loads((self.home / "stack.json").read_text())
        _start(
            self.cfg,
            {service: service_specs(self.cfg, config_file=str(self.cfg_path))[service]},
            state,
            log=lambda *_: None,
        )

    def simulate(self, sessions: int = 2) -> None:
        proc = self.cli("simulate", "--sessions", str(sessions))
        assert proc.returncode == 0, proc.stderr[-2000:]

    def set_up(self) -> None:
        """The stack, the small world, 4 sessions of traffic and a baseline cycle (unless `skip_setup`: an earlier
        run's home with --keep-up), then a trained champion at stake."""
        started, on = time.monotonic(), f"[{self.cfg.stack.database}]"
        for step in () if self.skip_setup else (("up", "--serve"), ("factory", "build")):
            proc = self.cli(*step)
            assert proc.returncode == 0, f"{step}: {proc.stderr[-3000:]}"
            print(f"{on} {' '.join(step)}: ok ({time.monotonic() - started:.0f}s)", flush=True)
        if not self.skip_setup:
            self.simulate(4)
            first = self.cli("cycle", "--json")
            assert first.returncode == 0, first.stderr[-3000:]
            print(
                f"{on} baseline cycle: {json.loads(first.stdout)['status']} ({time.monotonic() - started:.0f}s)",
                flush=True,
            )
        print(f"{on} champion at stake: {stake_champion(self)} ({time.monotonic() - started:.0f}s)", flush=True)

    def close(self) -> None:
        if not self.keep_up:
            self.cli("down")

    def rerun(self) -> Rerun:
        """What a user does next: `postgame cycle` again; its outcome, the stages it got back *Cached*, how long."""
        t = time.monotonic()
        proc = self.cli("cycle", "--json")
        report = json.loads(proc.stdout) if proc.returncode == 0 else None
        cached = cached_stages(self, latest_flow_run(self)["id"])
        return Rerun(
            status=report["status"] if report else "failed",
            cached=cached,
            error=_last_line(proc.stderr) if proc.returncode else "",
            seconds=time.monotonic() - t,
        )

    def finish(self, proc: subprocess.Popen, timeout: float = 1800) -> tuple[int | None, str, dict | None]:
        """The cycle's exit status (None: still running after `timeout`, then SIGKILLed), last `error:` line, report."""
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None, _last_error(self.home / "logs"), None
        report = None
        try:
            report = json.loads(out) if out.strip() else None
        except json.JSONDecodeError:
            pass
        return proc.returncode, _last_error(self.home / "logs"), report

    # --- the state ---------------------------------------------------------------------------------------------------
    def state(self) -> State:
        from models import registry
        from postgame import runtime
        from postgame.ingest import list_snapshots, load_snapshot
        from postgame.ingest.pipeline import is_log_object
        from postgame.store import split_uri

        runtime.forget()
        cfg = self.cfg
        snaps = list_snapshots(cfg=cfg)
        sessions: list[str] = []
        read: set[str] = set()
        for m in snaps:
            table = load_snapshot(m.snapshot_id, cfg=cfg, columns=["session_id"])
            sessions += [str(s) for s in table.column("session_id").to_pylist()]
            read |= {s.key for s in m.sources}
        root, prefix = split_uri(runtime.log_source(cfg))
        objects = {o.key for o in runtime.store(cfg, root).list(prefix) if is_log_object(o.key)}
        champion = registry.champion_version(cfg)
        ok = False
        if champion is not None:
            try:
                path = registry.download_version(cfg, champion.version)
                ok = (path / "config.json").exists() and any(path.glob("*.safetensors"))
            except Exception:  # noqa: BLE001 - not loadable is the finding
                ok = False
        from mlflow import MlflowClient

        client = MlflowClient(tracking_uri=runtime.tracking_uri(cfg))
        exp = client.get_experiment_by_name(cfg.tracking.experiment)
        train_runs = (
            len(
                [
                    r
                    for r in client.search_runs([exp.experiment_id], max_results=1000)
                    if (r.info.run_name or "").startswith("train-")
                ]
            )
            if exp
            else 0
        )
        return State(
            records=len(sessions),
            unique_sessions=len(set(sessions)),
            objects=len(objects),
            objects_read=len(objects & read),
            champion=champion.version if champion else None,
            champion_ok=ok if champion else True,
            train_runs=train_runs,
            moves=registry.champion_history(cfg),
        )


def _last_error(logs: Path) -> str:
    files = sorted(logs.glob("fault-cycle-*.log"), key=lambda p: p.stat().st_mtime)
    return _last_line(files[-1].read_text(errors="replace")) if files else ""


def cached_stages(suite: Suite, flow_run_id: str | None) -> list[str]:
    if not flow_run_id:
        return []
    runs = suite.post("task_runs/filter", {"flow_runs": {"id": {"any_": [flow_run_id]}}})
    return sorted(r["name"].rsplit("-", 1)[0] for r in runs if r["state_name"] == "Cached")


def latest_flow_run(suite: Suite) -> dict:
    return suite.post(
        "flow_runs/filter",
        {
            "sort": "START_TIME_DESC",
            "limit": 1,
            "flow_runs": {
                "start_time": {"is_null_": False},
                "state": {"type": {"any_": ["COMPLETED", "FAILED", "CRASHED"]}},
            },
        },
    )[0]


# --- the faults ------------------------------------------------------------------------------------------------------


def fault_store(suite: Suite) -> Outcome:
    suite.simulate()
    before = suite.state()
    t0 = time.time()
    proc = suite.start_cycle()
    caught = suite.wait_task("ingest", t0)
    suite.kill("s3")
    killed = time.monotonic()
    rc, error, report = suite.finish(proc)  # the store stays down: how long until the user hears, and what
    waited = time.monotonic() - killed
    suite.restart("s3")
    rerun = suite.rerun()
    after = suite.state()
    outcome = (
        f"{'killed during ingest' if caught else 'ingest not caught running'}; cycle rc {rc} "
        f"({report['status'] if report else 'failed'}) {waited:.0f}s after the kill; store back; "
        f"{rerun.summary()}"
    )
    return Outcome(
        "object store (SeaweedFS) stopped mid-ingest, then back and the cycle re-run", outcome, before, after, error
    )


def fault_mlflow(suite: Suite) -> Outcome:
    suite.simulate()
    before = suite.state()
    t0 = time.time()
    proc = suite.start_cycle()
    caught = suite.wait_task("promote", t0)
    suite.kill("mlflow")
    killed = time.monotonic()
    rc, error, _ = suite.finish(proc)
    ended = time.monotonic() - killed
    suite.restart("mlflow")
    mid = suite.state()
    rerun = suite.rerun()
    after = suite.state()
    outcome = (
        f"{'killed during promote' if caught else 'promote not caught running'}; cycle rc {rc} after "
        f"{ended:.0f}s; champion while down-then-back {mid.champion}; {rerun.summary()}"
    )
    return Outcome("MLflow killed during registration, then re-run", outcome, before, after, error)


def fault_worker(suite: Suite) -> Outcome:
    suite.simulate()
    before = suite.state()
    t0 = time.time()
    proc = suite.start_cycle()
    caught = suite.wait_task("train", t0)
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    rerun = suite.rerun()
    after = suite.state()
    outcome = (
        f"{'SIGKILL during train' if caught else 'train not caught running'}; {rerun.summary()}; training "
        f"runs +{after.train_runs - before.train_runs} (1 = same run folder reused)"
    )
    return Outcome("worker SIGKILLed during training, then re-run", outcome, before, after, rerun.error)


def fault_twice(suite: Suite) -> Outcome:
    """Two `postgame trigger`s at once (the same call, from two threads): each has its own idempotency key, as two
    users would; a 503 from the busy server is retried with that key (flows/deploy.py)."""
    from flows.deploy import trigger

    suite.simulate()
    before = suite.state()
    said: list[str] = []

    def start(n: int) -> None:
        t = time.monotonic()
        try:
            run = trigger(suite.cfg, reason=f"fault: twice {n}")
            said.append(f"{run.id}|flow run {run.name} {run.state.lower()} ({time.monotonic() - t:.1f}s)")
        except Exception as exc:  # noqa: BLE001 - what the user saw is the finding
            said.append(f"|error: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=start, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [line.split("|")[0] for line in said if line.split("|")[0]]
    deadline = time.monotonic() + 1800
    while True:
        runs = [_get(suite, f"flow_runs/{i}") for i in ids]
        if all(r["state_type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED") for r in runs):
            break
        assert time.monotonic() < deadline, "the two runs did not finish"
        time.sleep(3)
    after = suite.state()
    ordered = sorted(runs, key=lambda r: r["start_time"] or "")
    overlap = len(ordered) == 2 and (ordered[1]["start_time"] or "") < (ordered[0]["end_time"] or "")
    results = []
    for r in ordered:
        tasks = suite.post("task_runs/filter", {"flow_runs": {"id": {"any_": [r["id"]]}}})
        names = {t["name"].rsplit("-", 1)[0] for t in tasks}
        results.append(f"{r['state_name']}/{'trained' if 'train' in names else 'skipped'} ({r['total_run_time']:.0f}s)")
    outcome = (
        f"triggers: {'; '.join(line.split('|')[1] for line in said)}; runs: {' then '.join(results)}; "
        f"overlapped: {'YES' if overlap else 'no'}"
    )
    return Outcome("the same cycle triggered twice at once (`postgame trigger` x2, deployment)", outcome, before, after)


def restart_during(suite: Suite, service: str, stage: str, fault: str) -> Outcome:
    """`service` SIGKILLed (its process group) while `stage` runs, started again as `up` starts it once the killed
    processes are gone, reaped too (PostgreSQL's backends are process groups of their own and leave after the
    postmaster; a new postmaster refuses a data folder whose shared memory they still hold, or whose postmaster.pid
    names a process that still exists: the killed one stays a zombie until init reaps it); the cycle's end; a re-run
    if it failed."""
    from infra.stack import _descendants

    suite.simulate()
    before = suite.state()
    t0 = time.time()
    proc = suite.start_cycle()
    try:
        caught = suite.wait_task(stage, t0, proc=proc)
        killed = [suite.pid(service), *_descendants(suite.pid(service))]
        suite.kill(service)
        down_at = time.monotonic()
        while any(_exists(pid) for pid in killed) and time.monotonic() - down_at < 60:
            time.sleep(0.1)
        gone = time.monotonic() - down_at
        suite.restart(service)  # a failed start stops the whole stack (infra/stack.py _start): the row is not staged
        outage = time.monotonic() - down_at
    except BaseException:
        with contextlib.suppress(ProcessLookupError):  # not left running against a stack that is gone
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    rc, error, report = suite.finish(proc, timeout=600)
    waited = time.monotonic() - down_at
    rerun = suite.rerun() if rc != 0 else None
    after = suite.state()
    ended = (
        f"cycle HUNG: still running {waited:.0f}s after the kill, SIGKILLed"
        if rc is None
        else f"cycle rc {rc} ({report['status'] if report else 'failed'}) {waited:.0f}s after the kill"
    )
    outcome = (
        f"{'restarted during ' + stage if caught else stage + ' not caught'} ({service} down {outage:.0f}s, its "
        f"{len(killed)} processes gone after {gone:.1f}s); {ended}{'; ' + rerun.summary() if rerun else ''}"
    )
    return Outcome(fault, outcome, before, after, error)


def _exists(pid: int) -> bool:
    """The process is there, running or a zombie not reaped yet (what PostgreSQL's lock file check sees)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def fault_prefect(suite: Suite) -> Outcome:
    return restart_during(suite, "prefect", "train", "Prefect server killed mid-cycle (training) and started again")


def _episode_dirs(cfg) -> set[Path]:
    """The agent environment's episode folders (`postgame-episode-*`) where the reaper looks for them."""
    from evals.agent.workspace import PREFIX
    from evals.harness.testrun import work_root

    found: set[Path] = set()
    for top in {work_root(cfg.eval) or Path(tempfile.gettempdir()), Path(tempfile.gettempdir())}:
        try:
            found |= {p for p in top.iterdir() if p.name.startswith(PREFIX) and p.is_dir()}
        except OSError:
            pass
    return found


def _graded(report: dict | None) -> dict:
    return {i: (r["outcome"], r["reward"]) for i, r in (report or {}).get("instances", {}).items()}


def fault_agent(suite: Suite) -> Outcome:
    """`postgame agent replay` SIGKILLed (its whole process group) while an episode's sandboxed `bash` step runs;
    then the same replay again. The design: the sandbox dies with its parent (bwrap --die-with-parent), the episode
    folder stays until the next environment made in some process reaps it (evals/agent/workspace.py::reap)."""
    from evals.agent.workspace import processes_inside

    before = suite.state()
    split = suite.home / "agent-split"
    if not (split / "instances.jsonl").exists():
        proc = suite.cli("factory", "export", "--split", "eval", "--out", str(split))
        assert proc.returncode == 0, proc.stderr[-2000:]
    first = json.loads((split / "instances.jsonl").read_text().splitlines()[0])
    one = suite.home / "agent-one.jsonl"
    one.write_text(json.dumps(first) + "\n")
    marker = f"fault-suite-sleep-{os.getpid()}"
    gold = first["patch"] if first["patch"].endswith("\n") else first["patch"] + "\n"
    apply_gold = f"git apply <<'POSTGAME_EOF' || patch -p1 <<'POSTGAME_EOF2'\n{gold}POSTGAME_EOF\n{gold}POSTGAME_EOF2\n"
    script = suite.home / "agent-script.jsonl"
    script.write_text(
        "\n".join(
            json.dumps(line)
            for line in [
                {"tool": "bash", "args": {"command": apply_gold}},
                {"tool": "run_tests", "args": {}},
                {"tool": "bash", "args": {"command": f"sleep 20; echo {marker}"}},
                {"tool": "run_tests", "args": {}},
                {"tool": "submit", "args": {}},
            ]
        )
        + "\n"
    )

    def replay_args(out: str) -> list[str]:
        return [
            *("agent", "replay", "--instances", str(one), "--repos", str(split / "repos")),
            *("--script", str(script), "--out", str(suite.home / out), "--tools", "all", "--json"),
        ]

    def replay(out: str) -> tuple[dict | None, float, str]:
        t = time.monotonic()
        proc = suite.cli(*replay_args(out), timeout=900)
        report = json.loads(proc.stdout) if proc.returncode == 0 else None
        return report, time.monotonic() - t, "" if report else _last_line(proc.stderr) or proc.stderr[-200:]

    reference, ref_s, ref_err = replay("agent-reference")
    dirs0 = _episode_dirs(suite.cfg)
    killed = subprocess.Popen(
        [sys.executable, "-m", "postgame", "--config", str(suite.cfg_path), *replay_args("agent-killed")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=suite.env(),
        cwd=ROOT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 600
    while not processes_inside(f"sleep 20; echo {marker}") and killed.poll() is None:
        assert time.monotonic() < deadline, "the episode's bash step never started"
        time.sleep(0.2)
    caught = killed.poll() is None
    time.sleep(1.0)
    mine = _episode_dirs(suite.cfg) - dirs0
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    time.sleep(2.0)
    left_running = [pid for d in mine for pid in processes_inside(str(d))] + processes_inside(marker)
    left_folders = [d for d in mine if d.exists()]
    again, again_s, again_err = replay("agent-rerun")
    after_folders = [d for d in mine if d.exists()]
    after = suite.state()
    same = _graded(again) == _graded(reference) and bool(again)
    grade = ", ".join(f"{o} (reward {r})" for o, r in _graded(reference).values()) or f"failed: {ref_err}"
    outcome = (
        f"{'SIGKILL of the process group during the bash step' if caught else 'replay ended before the kill'}; "
        f"sandbox processes left: {len(set(left_running)) or 'none'}; episode folders left at once: "
        f"{len(left_folders)} of {len(mine)} (the reaper runs when the next environment is made); re-run "
        f"{'completed' if again else 'FAILED: ' + again_err} in {again_s:.0f}s (reference {ref_s:.0f}s), "
        f"folders left after it: {len(after_folders)}; graded {grade}, re-run {'the same' if same else 'DIFFERENT'}"
    )
    return Outcome(
        "`postgame agent replay` SIGKILLed mid-episode (sandboxed `bash` step), then re-run",
        outcome,
        before,
        after,
        again_err,
    )


def fault_postgres(suite: Suite) -> Outcome:
    """The PostgreSQL server (the local one `up` starts for `stack.database: postgres`) SIGKILLed during training and
    started again, on a stack of its own under `<home>/postgres-stack`: the other rows' stack is on SQLite. It is set
    up as that one is, its champion the same checkpoint (models/base_agent) by a recorded move; it is stopped after the
    row (unless --keep-up)."""
    pg = Suite(suite.home / "postgres-stack", "postgres", skip_setup=suite.skip_setup, keep_up=suite.keep_up)
    try:
        pg.set_up()
        return restart_during(
            pg,
            "postgres",
            "train",
            "PostgreSQL (Prefect's and MLflow's database, stack.database: postgres) SIGKILLed mid-cycle (training, "
            "the postmaster) and started again",
        )
    finally:
        pg.close()


OWN_STACK = {"postgres"}  # rows that set up a stack of their own: the first stack is not started for them alone
STAKE_WHY = "fault suite: a trained champion at stake"


def stake_champion(suite: Suite) -> str:
    """Make the champion a version other than the base, by a recorded move: the base (models/base) is registered as
    the first champion when there is none, then the agent base (models/base_agent, fine-tuned from it) as a new
    version, moved to through `registry.move_champion` with why/by. A champion some cycle promoted, or an earlier
    run's staked one, is kept."""
    import mlflow

    from models import registry
    from models.policy import SHIPPED_AGENT_BASE, SHIPPED_BASE
    from postgame import runtime

    runtime.forget()
    cfg = suite.cfg
    current = registry.champion_version(cfg)
    if current is not None and current.tags.get("origin") != "bootstrap":
        return f"v{current.version} ({current.tags.get('origin', 'a promoted candidate')}) kept"
    if current is None:
        registry.register_base(cfg, SHIPPED_BASE)
        current = registry.champion_version(cfg)
    runtime.resolve(cfg)
    mlflow.set_experiment(cfg.tracking.experiment)
    with mlflow.start_run(run_name="fault-suite-champion") as run:
        uri = registry.log_policy(cfg, SHIPPED_AGENT_BASE, run_id=run.info.run_id)
    version = registry.register(
        cfg,
        uri,
        tags={"origin": "fault-suite", "lineage.run_id": run.info.run_id, "lineage.checkpoint": "models/base_agent"},
        description="models/base_agent (fine-tuned from models/base): the champion the fault suite puts at stake.",
    )
    registry.clear_challenger(cfg, version.version)
    registry.move_champion(
        cfg, version.version, expected=current.version if current else None, why=STAKE_WHY, by="fault-suite"
    )
    return f"v{version.version} (models/base_agent) made champion from v{current.version if current else 'none'}"


def champion_verdict(before: State, after: State) -> str:
    """Unchanged, or moved by recorded moves that chain from the champion before to the one after."""
    if after.moves[: len(before.moves)] != before.moves:
        return "HISTORY CHANGED"
    new = after.moves[len(before.moves) :]
    if not new:
        return "unchanged" if after.champion == before.champion else "MOVED WITHOUT A RECORD"
    chain = [before.champion] + [m.to for m in new]
    if all(m.from_ == chain[i] for i, m in enumerate(new)) and chain[-1] == after.champion:
        return "recorded move: " + "; ".join(f"v{m.from_}→v{m.to} by {m.by} ({m.why[:80]})" for m in new)
    return "MOVED WITHOUT A RECORD (history does not chain)"


def _get(suite: Suite, path: str) -> dict:
    import httpx

    return httpx.get(f"{suite.api}/{path}", timeout=30).raise_for_status().json()


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith("error:")]
    return lines[-1][:200] if lines else ""


def table(outcomes: list[Outcome]) -> str:
    rows = [
        "| fault | outcome | records before → after (unique) | log objects read/all after | champion before → "
        "after (loadable; moves) | error shown |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for o in outcomes:
        rows.append(
            f"| {o.fault} | {o.outcome} | {o.before.records} ({o.before.unique_sessions}) → {o.after.records} "
            f"({o.after.unique_sessions}) | {o.after.objects_read}/{o.after.objects} | "
            f"v{o.before.champion} → v{o.after.champion} ({'yes' if o.after.champion_ok else 'NO'}; "
            f"{champion_verdict(o.before, o.after)}) | "
            f"{o.error or '-'} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--keep-up", action="store_true")
    parser.add_argument("--only", default="store,mlflow,worker,agent,twice,prefect,postgres")
    parser.add_argument(
        "--skip-setup",
        action="store_true",
        help="The stack, world and a champion are there already (an earlier run's --home with --keep-up).",
    )
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="postgame-faults-"))
    suite = Suite(home.absolute(), skip_setup=args.skip_setup, keep_up=args.keep_up)
    started = time.monotonic()
    print(f"home {home}", flush=True)
    names = args.only.split(",")
    try:
        if set(names) - OWN_STACK:
            suite.set_up()
        faults = {
            "store": fault_store,
            "mlflow": fault_mlflow,
            "worker": fault_worker,
            "twice": fault_twice,
            "prefect": fault_prefect,
            "agent": fault_agent,
            "postgres": fault_postgres,
        }
        outcomes = []
        for name in names:
            t = time.monotonic()
            try:
                outcome = faults[name](suite)
            except Exception as exc:  # noqa: BLE001 - one fault that could not be staged does not hide the others
                empty = State(0, 0, 0, 0, None, False, 0)
                outcome = Outcome(name, f"NOT STAGED: {type(exc).__name__}: {str(exc)[:150]}", empty, empty)
            outcomes.append(outcome)
            print(f"{name}: {outcome.outcome} ({time.monotonic() - t:.0f}s)\n{table(outcomes)}\n", flush=True)
        print(f"\ntotal {time.monotonic() - started:.0f}s, home {home}")
    finally:
        suite.close()


if __name__ == "__main__":
    main()
