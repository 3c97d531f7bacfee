"""The embedded default, end to end on a laptop CPU (what `make demo` runs):

    postgame demo [--cycles N] [--sessions N] [--no-keep-up]

1. the local stack (Prefect, MLflow, SeaweedFS S3) and the deployment `continuous-cycle/continuous` served by its
   runner (`postgame up --serve`) — started unless it runs;
2. the task world — built once (deterministic from `factory.seed`), its environments in S3;
3. the champion — unless one serves, the base policy shipped in `models/base_agent/` (`models/base/` with
   `agent.enabled: false`, or `policy.base_model`), registered as the first version;
4. `demo.cycles` rounds of: production traffic from the champion → one continuous-training cycle, started as a flow
   run of the deployment (reason `demo`), so the Prefect UI's Deployments page shows the schedule, the runs and the
   one-at-a-time limit afterwards;
5. the report across the cycles (markdown + charts) and the URLs to open.

The console gets one line per step (with a progress bar while it runs) and one short block per cycle; library
warnings and TRL's per-step logs go to `<home>/<demo.log_file>`; the cycles' own output (they run in the
deployment's runner) to `<home>/logs/serve.log` and their flow runs' logs in the Prefect UI.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from postgame.config import Config
from postgame.errors import CycleFailed


def demo_traffic(cfg: Config):
    """Production traffic is dirty: unless the config asks for its own dirt, the demo plants some, so that the
    quarantine, the dedupe and the redaction have something to show."""
    sim = cfg.factory.simulate
    if sim.duplicate_rate or sim.malformed_rate or sim.secret_rate:
        return sim
    return sim.model_copy(update={"duplicate_rate": 0.05, "malformed_rate": 0.05, "secret_rate": 0.1})


def bootstrap_base(cfg: Config, progress: Callable[[str], None] | None = None) -> str:
    """The champion the first cycle must beat: the current one, else the base policy (`policy.base_model`, or the
    base shipped in `models/base_agent/`, `models/base/` when the policy answers once) registered as the first
    version and made champion, so every gain is measured against a policy that already resolves something
    (`postgame bootstrap` also scores it on every split). A newly registered base is tagged with the chance
    baselines of the sets the cycles grade (`measure_base_chance`), so the report's charts draw them."""
    from models import registry
    from models.policy import base_policy_dir

    champion = registry.champion_version(cfg)
    if champion is not None:
        return f"champion v{champion.version} serves"
    version, _ = registry.register_base(cfg, base_policy_dir(cfg))
    chance = measure_base_chance(cfg, version.version, progress=progress)
    return f"base policy {base_policy_dir(cfg).name} registered as v{version.version}, the champion; chance: {chance}"


def measure_base_chance(cfg: Config, version: str, progress: Callable[[str], None] | None = None) -> str:
    """Grade the empty patch and a random single edit on each set the cycles grade (`models.evaluate.graded_sets`)
    and tag `version` with them as `postgame bootstrap` does (2 gradings a task). Returns one line of them."""
    from evals.factory.instances import load_split
    from models import registry
    from models.evaluate import graded_sets
    from models.measure import measure_chance

    _, sets, _ = graded_sets(cfg)
    tags: dict[str, str] = {}
    parts = []
    for split, records in sets.items():
        ids = {r["instance_id"] for r in records}
        instances = [i for i in load_split(cfg, split) if i.instance_id in ids]
        if progress:
            progress(f"chance baselines on {split} ({len(instances)} tasks)")
        scores = measure_chance(
            cfg, split, instances, out_dir=cfg.home / "runs" / f"chance-v{version}", seed=cfg.policy.seed
        )
        tags |= scores.tags()
        parts.append(f"{split} random edit {scores.random_edit:.1%}, empty {scores.empty:.1%}")
    registry.tag_version(cfg, version, tags)
    return "; ".join(parts)


class Screen:
    """What the user sees: short lines, and while a step runs the progress bar every command shows
    (`postgame.console.progress_bar`) on the real terminal; not a terminal (a CI log, a pipe): just the line when
    the step ends."""

    def __init__(self, terminal: TextIO):
        from rich.console import Console

        self.terminal = terminal
        self.console = Console(file=terminal, highlight=False, soft_wrap=True)

    def line(self, text: str = "") -> None:
        self.console.print(text, markup=False)

    @contextmanager
    def step(self, title: str, total: int | None = None) -> Iterator[_Bar]:
        from postgame.console import progress_bar

        started = time.monotonic()
        with progress_bar(title, total, enabled=True, file=self.terminal) as tell:
            bar = _Bar(tell)
            yield bar
        self.line(f"{title}: {bar.outcome or 'done'} ({time.monotonic() - started:.0f}s)")


class _Bar:
    """A step's bar as the demo drives it: `advance(n)` (traffic), `say(text)` (stack, task world), `set(n)` (the
    cycle's stages done so far), `tell(text, n)`; `outcome` is the step's closing line."""

    def __init__(self, tell: Callable[[str, int], None]):
        self._tell, self.text, self.done, self.outcome = tell, "", 0, ""

    def advance(self, n: int = 1) -> None:
        self.tell(self.text, n)

    def set(self, completed: int) -> None:
        self.tell(self.text, completed - self.done)

    def say(self, text: str) -> None:
        self.tell(text)

    def tell(self, text: str, done: int = 0) -> None:
        self.text, self.done = text[:70], self.done + done
        self._tell(self.text, done)


def cycle_block(report) -> list[str]:
    """The few lines each cycle prints under its progress line."""
    if report.status == "skipped":
        return ["  nothing new to learn from (skipped)", f"  {report.money()}"]
    verdict = f"PROMOTED v{report.version}" if report.promoted else f"kept v{report.champion_version}"
    return [
        f"  ingest   {report.stages.get('ingest', '')}",
        f"  train    {report.stages.get('train', '')}",
        f"  evaluate {report.stages.get('evaluate', '')} -> {verdict}",
        f"  {report.money()}",
    ]


def run_demo(
    cfg: Config,
    *,
    cycles: int | None = None,
    sessions: int | None = None,
    keep_up: bool = True,
    config_path: str | None = None,
    terminal: TextIO | None = None,
):
    """The demo; returns the cycle reports. With `terminal` None, library output goes to the log file."""
    from postgame.console import library_output_to

    log_path = cfg.home / cfg.demo.log_file
    if terminal is not None:
        return _run(
            cfg,
            cycles or cfg.demo.cycles,
            sessions or cfg.demo.sessions,
            keep_up,
            config_path,
            Screen(terminal),
            log_path,
        )
    with library_output_to(log_path) as real_terminal:
        return _run(
            cfg,
            cycles or cfg.demo.cycles,
            sessions or cfg.demo.sessions,
            keep_up,
            config_path,
            Screen(real_terminal),
            log_path,
        )


def _run(
    cfg: Config, cycles: int, sessions: int, keep_up: bool, config_path: str | None, screen: Screen, log_path: Path
):
    from evals.factory.build import build_tasks
    from flows.cycle import CYCLE_STAGES
    from flows.deploy import deployment_name, trigger
    from infra.stack import down, up
    from models.traffic import simulate_traffic
    from postgame.report import history, measured_chance, write_report

    screen.line(f"postgame demo: {cycles} cycles of {sessions} sessions (home {cfg.home}); library logs: {log_path}")
    reports = []
    try:
        with screen.step("local stack") as bar:
            up(cfg, log=bar.say, serve=True, config_file=config_path)
            bar.outcome = f"Prefect, MLflow, SeaweedFS S3 and the deployment {deployment_name(cfg)} up on loopback"
        with screen.step("task world") as bar:
            built = build_tasks(cfg, progress=bar.say)
            bar.outcome = built.summary()
        with screen.step("champion") as bar:
            bar.outcome = bootstrap_base(cfg, progress=bar.say)
        demo_key = uuid.uuid4().hex[:8]  # one demo's cycles: a retried trigger never starts a second run
        for n in range(1, cycles + 1):
            with screen.step(f"cycle {n}/{cycles} traffic", total=sessions) as bar:
                traffic = simulate_traffic(
                    cfg, sessions=sessions, settings=demo_traffic(cfg), progress=bar.tell, announce=False
                )
                bar.outcome = f"{traffic.sessions} sessions, {traffic.outcomes.get('resolved', 0)} resolved"
            with screen.step(f"cycle {n}/{cycles}", total=len(CYCLE_STAGES)) as bar:
                try:  # a flow run of the deployment, as a schedule, the API or an event would start it
                    run = trigger(cfg, reason="demo", idempotency_key=f"demo-{demo_key}-{n}")
                    bar.say(f"flow run {run.name}: queued")
                    report = deployment_cycle(cfg, run.id, bar)
                    bar.outcome = f"cycle {report.cycle} of the experiment (flow run {run.name}), " + (
                        "promoted" if report.promoted else report.status
                    )
                except CycleFailed as exc:  # a failed gate stops this cycle, not the demo
                    bar.outcome = f"stopped: {str(exc).splitlines()[0][:200]}"
                    continue
            reports.append(report)
            for text in cycle_block(report):
                screen.line(text)
        with screen.step("report") as bar:
            written = write_report(history(cfg), cfg.home / "report", measured_chance(cfg))
            bar.outcome = str(written.markdown)
    except BaseException:
        screen.line(f"demo stopped; the details are in {log_path} and {cfg.home / 'logs'}")
        if not keep_up:
            down(cfg, log=lambda *_: None)
        raise
    _epilogue(cfg, screen, reports, written, keep_up)
    return reports


def deployment_cycle(cfg: Config, run_id: str, bar: _Bar):
    """Follow a cycle's flow run of the deployment to its end (the bar moves stage by stage) and return its report
    (as the cycle recorded it in MLflow). Raises CycleFailed when the run ends any other way, with its error."""
    from flows.cycle import CYCLE_STAGES
    from flows.deploy import wait_for_run
    from postgame.report import history

    def on_tasks(names: list[str]) -> None:
        done = {name.rsplit("-", 1)[0] for name in names} & set(CYCLE_STAGES)
        bar.set(len(done))
        following = next((stage for stage in CYCLE_STAGES if stage not in done), None)
        if following:
            bar.say(following)

    final = wait_for_run(cfg, run_id, on_tasks=on_tasks)
    message = ((final.get("state") or {}).get("message") or "").removeprefix("Flow run encountered an exception: ")
    if final["state_type"] != "COMPLETED":
        raise CycleFailed(f"flow run {final['name']} {final['state_name'].lower()}: {message or 'no message'}")
    report = next((r for r in reversed(history(cfg)) if r.flow_run_id == run_id), None)
    if report is None:
        raise CycleFailed(f"flow run {final['name']} completed without a cycle report: {message or 'no message'}")
    return report


def trigger_lines(cfg: Config) -> list[str]:
    """Where the deployment is and how to start one more cycle of it: the UI, the CLI, the REST call."""
    from flows.deploy import api_url, deployment_info

    info = deployment_info(cfg, runs=0)
    if info is None:
        return []
    schedule = ", ".join(info.schedules) or "no schedule"
    auth = " -u USER:PASSWORD" if cfg.operate.auth.enabled else ""
    return [
        f"Deployment: {info.name} ({schedule}; one cycle at a time: {info.concurrency}) {info.url}",
        "one more cycle: the Run button on that page, `postgame trigger`, or",
        f"  curl{auth} -X POST {api_url(cfg)}/deployments/{info.id}/create_flow_run "
        """-H 'Content-Type: application/json' -d '{"parameters": {"reason": "api"}}'""",
    ]


def _epilogue(cfg: Config, screen: Screen, reports, written, keep_up: bool) -> None:
    from infra.stack import down

    headline = written.markdown.read_text().split("\n## ", 1)[0].splitlines()
    for text in headline[2:]:
        if text.strip():
            screen.line(text)
    screen.line(f"report: {written.markdown}")
    screen.line(f"charts: {', '.join(p.name for p in written.charts)} in {written.markdown.parent}")
    last = reports[-1] if reports else None
    if last is not None and last.urls.get("prefect"):
        screen.line(
            f"Prefect UI: {last.urls['prefect']}/runs  (flow 'continuous-cycle'; artifacts: cycle-report, "
            f"cycles, lineage)"
        )
    mlflow_url = last.urls.get("mlflow", "") if last else ""
    if mlflow_url.startswith("http"):
        screen.line(f"MLflow UI:  {mlflow_url}/#/models/{cfg.tracking.registered_model}")
    screen.line("lineage:    postgame lineage champion   |   report again: postgame report --out DIR")
    if keep_up:
        for text in trigger_lines(cfg):
            screen.line(text)
        screen.line("The stack stays up to browse; stop it with: postgame down")
    else:
        from prefect.logging.handlers import APILogWorker

        with screen.step("stopping the stack") as bar:
            APILogWorker.drain_all(timeout=10)  # send the cycles' queued logs while the Prefect server still runs
            down(cfg, log=bar.say)
            bar.outcome = "stopped"
