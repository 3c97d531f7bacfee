"""Benchmark of the agent environment: `run_tests` inside an episode against bare pytest on the same tree, and
scripted episodes per minute with 1 and 2 workers.

    python benchmarks/bench_agent.py [--reps 10] [--episodes 20]

The limit for `run_tests` is pytest itself: the same visible test files of the same working copy, run by
`python -m pytest -q -p no:cacheprovider` outside any sandbox. The ratio is the whole step (env.step: sandbox launch,
launcher, result plugin, observation) over that, median of `--reps` alternating runs. Episodes: view, run_tests,
the gold edit, run_tests, submit (graded), on the harness's example instances, through a thread runner.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evals.agent import make_environment
from evals.agent.batch import Script, run_episodes
from evals.harness.examples import INSTANCES_FILE
from evals.harness.examples.build import build_repos
from evals.harness.instance import load_instances
from evals.harness.searchreplace import SearchReplaceError
from postgame.settings.agent import AgentSettings
from postgame.settings.harness import HarnessSettings
from postgame.settings.runner import RunnerSettings


def gold_calls(instance) -> list[dict]:
    """The gold patch as edit calls (one per hunk: the removed lines -> the added lines)."""
    calls, path, old, new = [], None, [], []
    for line in instance.patch.splitlines():
        if line.startswith("+++ b/"):
            path = line[6:]
        elif line.startswith("@@") or line.startswith("diff --git"):
            if old or new:
                calls.append(
                    {"tool": "edit", "args": {"path": path, "search": "\n".join(old), "replace": "\n".join(new)}}
                )
            old, new = [], []
        elif line.startswith(("---", "index ")):
            continue
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith(" "):
            old.append(line[1:])
            new.append(line[1:])
    if old or new:
        calls.append({"tool": "edit", "args": {"path": path, "search": "\n".join(old), "replace": "\n".join(new)}})
    return calls


def bench_run_tests(instance, repos: Path, reps: int) -> dict:
    harness = HarnessSettings()
    env = make_environment(AgentSettings(max_steps=reps * 2 + 5), harness, repos_dir=repos)
    env.reset(instance)
    ws = env._workspace
    step, bare, bare_noplug = [], [], []
    noplug = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    for _ in range(reps):
        t = time.perf_counter()
        env.step("run_tests", {})
        step.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ws.visible],
            cwd=ws.copy,
            capture_output=True,
            check=False,
        )
        bare.append(time.perf_counter() - t)
        t = time.perf_counter()  # what the sandbox runs: pytest without the venv's other plugins
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ws.visible],
            cwd=ws.copy,
            capture_output=True,
            check=False,
            env=noplug,
        )
        bare_noplug.append(time.perf_counter() - t)
    env.close()
    s, b, n = statistics.median(step), statistics.median(bare), statistics.median(bare_noplug)
    return {
        "instance": instance.instance_id,
        "step_s": round(s, 3),
        "bare_pytest_s": round(b, 3),
        "ratio": round(s / b, 3),
        "bare_pytest_no_autoload_s": round(n, 3),
        "ratio_no_autoload": round(s / n, 3),
    }


def bench_episodes(instances, repos: Path, n: int, workers: int, out: Path) -> dict:
    chosen = [instances[i % len(instances)] for i in range(n)]
    lines: list[dict] = []
    for inst in instances:
        calls = [
            {"tool": "view", "args": {"path": gold_calls(inst)[0]["args"]["path"]}},
            {"tool": "run_tests", "args": {}},
            *gold_calls(inst),
            {"tool": "run_tests", "args": {}},
            {"tool": "submit", "args": {}},
        ]
        lines += [{**c, "instance_id": inst.instance_id} for c in calls]
    t = time.perf_counter()
    report = run_episodes(
        chosen,
        Script(tuple(lines)),
        agent=AgentSettings(),
        harness=HarnessSettings(),
        repos_dir=repos,
        out_dir=out,
        runner=RunnerSettings(kind="thread", workers=workers),
    )
    seconds = time.perf_counter() - t
    return {
        "workers": workers,
        "episodes": n,
        "seconds": round(seconds, 1),
        "per_minute": round(n * 60 / seconds, 1),
        "resolved": report.resolved,
        "outcomes": {k: v for k, v in report.outcomes.items() if v},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--episodes", type=int, default=20)
    args = parser.parse_args()
    instances = load_instances(INSTANCES_FILE)
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as d:
        repos = Path(d) / "repos"
        build_repos(repos)
        try:
            steps = [bench_run_tests(i, repos, args.reps) for i in instances[:3]]
        except SearchReplaceError as exc:
            raise SystemExit(f"gold edit failed: {exc}") from None
        episodes = [bench_episodes(instances, repos, args.episodes, w, Path(d) / f"out{w}") for w in (1, 2)]
    print(json.dumps({"run_tests_vs_bare_pytest": steps, "episodes": episodes}, indent=2))


if __name__ == "__main__":
    main()
