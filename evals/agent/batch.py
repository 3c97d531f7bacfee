"""Many episodes, fanned out through the configured runner, and what they add up to.

    report = run_episodes(instances, policy_factory, agent=AgentSettings(), harness=HarnessSettings(),
                          repos_dir=REPOS, out_dir=OUT, runner=RunnerSettings())

Writes `OUT/trajectories.jsonl` (one trajectory record an episode, messages in the OpenAI chat shape) and
`OUT/report.json`: the outcome mix, resolved count, mean turns / tokens per episode, and each episode's harness
report (SWE-bench keys). `policy_factory(instance)` makes the policy of one episode; it and the instances must be
picklable for a process or Dask runner (a module-level function, or functools.partial of one).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evals.agent.env import make_environment
from evals.agent.episode import AgentPolicy, ScriptedPolicy, run_episode
from evals.harness.instance import Instance
from postgame.runners import Mapper, local_mapper
from postgame.settings.agent import OUTCOMES, AgentSettings
from postgame.settings.harness import HarnessSettings
from postgame.settings.runner import RunnerSettings


@dataclass(frozen=True)
class EpisodeJob:
    instance: Instance
    policy_factory: Callable[[Instance], AgentPolicy]
    agent: AgentSettings
    harness: HarnessSettings
    repos_dir: str | None
    context: str | None = None


def run_job(job: EpisodeJob) -> dict[str, Any]:
    """One episode (in whatever worker the runner chose): its trajectory record and harness report. The record's
    `cpu_seconds` is what the worker's process and the sandboxed runs it waited for spent meanwhile (with a thread
    runner, shared with the episodes beside it)."""
    from postgame.report import cpu_seconds

    started = cpu_seconds()
    env = make_environment(job.agent, job.harness, repos_dir=job.repos_dir)
    try:
        traj = run_episode(env, job.instance, job.policy_factory(job.instance), context=job.context)
    finally:
        env.close()
    record = traj.to_record()
    record["cpu_seconds"] = round(cpu_seconds() - started, 3)
    grade = traj.result.grade
    record["harness_report"] = grade.to_report() if grade is not None else None
    return record


@dataclass
class AgentReport:
    episodes: int
    resolved: int
    outcomes: dict[str, int]
    mean_turns: float
    mean_tokens: float
    p2p_breaking: int  # graded episodes whose patch broke a PASS_TO_PASS test
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        mix = ", ".join(f"{k} {v}" for k, v in self.outcomes.items() if v)
        return (
            f"{self.episodes} episodes: {self.resolved} resolved; outcomes: {mix}; "
            f"{self.mean_turns:.1f} turns and {self.mean_tokens:.0f} tokens per episode"
        )


def summarise(records: list[dict[str, Any]]) -> AgentReport:
    outcomes = Counter(r["outcome"] for r in records)
    return AgentReport(
        episodes=len(records),
        resolved=sum(bool(r["resolved"]) for r in records),
        outcomes={o: outcomes.get(o, 0) for o in OUTCOMES},
        mean_turns=statistics.fmean([r["turns"] for r in records]) if records else 0.0,
        mean_tokens=statistics.fmean([r["prompt_tokens"] + r["completion_tokens"] for r in records])
        if records
        else 0.0,
        p2p_breaking=sum(r["p2p_broken"] > 0 for r in records),
        instances={
            r["instance_id"]: {
                "outcome": r["outcome"],
                "reward": r["reward"],
                "resolved": r["resolved"],
                "turns": r["turns"],
                "p2p_broken": r["p2p_broken"],
                "harness_report": r["harness_report"],
            }
            for r in records
        },
    )


def run_episodes(
    instances: list[Instance],
    policy_factory: Callable[[Instance], AgentPolicy],
    *,
    agent: AgentSettings,
    harness: HarnessSettings,
    repos_dir: str | Path | None,
    out_dir: str | Path,
    runner: RunnerSettings,
    contexts: dict[str, str] | None = None,
    mapper: Mapper | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> AgentReport:
    """Play one episode per instance through `runner` (or `mapper`, e.g. the Prefect mapper a flow opened); write
    the trajectories and the report. `contexts` gives an instance's task text (by id), e.g. the scaffold's oracle
    prompt; `progress` as in `play_episodes`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records = play_episodes(
        instances,
        policy_factory,
        agent=agent,
        harness=harness,
        repos_dir=repos_dir,
        runner=runner,
        contexts=contexts,
        mapper=mapper,
        trajectories=out / "trajectories.jsonl",
        progress=progress,
    )
    report = summarise(records)
    (out / "report.json").write_text(json.dumps(report.to_dict(), indent=2))
    return report


def play_episodes(
    instances: list[Instance],
    policy_factory: Callable[[Instance], AgentPolicy],
    *,
    agent: AgentSettings,
    harness: HarnessSettings,
    repos_dir: str | Path | None,
    runner: RunnerSettings,
    contexts: dict[str, str] | None = None,
    mapper: Mapper | None = None,
    trajectories: Path | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> list[dict[str, Any]]:
    """The trajectory records (each with its `harness_report`) of one episode per instance, in instance order;
    appended to `trajectories` (JSON Lines) as they finish, when given. `progress(instance id, 1)` is told as each
    episode finishes (a progress bar's `tell`, out of `len(instances)`)."""
    contexts = contexts or {}
    jobs = [
        EpisodeJob(
            i, policy_factory, agent, harness, str(repos_dir) if repos_dir else None, contexts.get(i.instance_id)
        )
        for i in instances
    ]
    records = []
    with _mapper(runner, mapper) as fan_out:
        fh = open(trajectories, "w") if trajectories is not None else None
        try:
            for record in fan_out(run_job, jobs):
                records.append(record)
                if fh is not None:
                    fh.write(json.dumps({k: v for k, v in record.items() if k != "harness_report"}) + "\n")
                    fh.flush()  # what finished is on disk even if the batch is killed
                if progress:
                    progress(record["instance_id"], 1)
        finally:
            if fh is not None:
                fh.close()
    return records


@contextmanager
def _mapper(runner: RunnerSettings, given: Mapper | None) -> Iterator[Mapper]:
    if given is not None:
        yield given
    else:
        with local_mapper(runner) as opened:
            yield opened


@dataclass(frozen=True)
class Script:
    """A replay script's lines as a policy factory (picklable: the lines travel with it)."""

    lines: tuple[dict[str, Any], ...]

    def __call__(self, instance: Instance) -> ScriptedPolicy:
        from evals.agent.episode import script_for

        return ScriptedPolicy(script_for(self.lines, instance.instance_id))


def load_script(path: str | Path) -> Script:
    """Read a replay script: one JSON object a line, `{"tool": NAME, "args": {...}}`, optionally `"instance_id"`."""
    lines = []
    for n, text in enumerate(Path(path).read_text().splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not JSON: {exc}") from None
        if not isinstance(line, dict) or not isinstance(line.get("tool"), str):
            raise ValueError(f"{path}:{n}: expected an object with a string 'tool', got {text[:80]!r}")
        lines.append(line)
    return Script(tuple(lines))
