"""Validation: which mutants are bugs. Every verdict comes from real runs of the evaluation harness.

- `baseline`: the clean project through the harness twice; the tests that pass both times are the ones that can be
  FAIL_TO_PASS or PASS_TO_PASS. Also which lines the suite executes (a cheap pre-filter: a mutant on a line no test
  runs cannot break a test, so it is not worth a harness run).
- `validate_candidate`: the mutant's tree is snapshotted (the same `.tar.gz` that ships as the instance's
  environment) and run through `evals.harness.run_tests` with the empty patch, `validation_runs` times.
  FAIL_TO_PASS = baseline-passing tests that fail; PASS_TO_PASS = those that still pass. Kept iff both are non-empty
  and every run agrees; a timeout, a pytest that does not exit normally (exit code other than 0 or 1: a crash) or an
  infrastructure error drops the candidate with that reason.

Verdicts are cached on disk by (snapshot hash, test patch, harness code, settings), so a rebuild costs nothing.
These functions run in worker processes: arguments and results are plain picklable data.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from evals.factory.files import make_targz, write_tree
from evals.factory.mutate import Mutation
from evals.factory.seeds import SeedProject, load_seed
from evals.harness.constants import PASSING
from postgame.settings.harness import HarnessSettings

KEPT = "kept"
MAX_FAILURES_LOG = 48 * 1024


@dataclass
class Baseline:
    project: str
    passing: list[str]
    unreliable: list[str]  # failed or flickered on the clean base: never used as F2P / P2P
    covered: dict[str, list[int]]  # module -> lines the suite executes
    error: str | None = None
    seconds: float = 0.0
    flaky: list[str] = field(default_factory=list)  # of `unreliable`, those whose result changed between runs


@dataclass
class Verdict:
    project: str
    mutation: Mutation
    status: str  # kept | no_failing_test | no_passing_test | flaky | timed_out | crashed | infra_error
    env_sha256: str
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    failures_log: str = ""
    detail: str = ""
    seconds: float = 0.0
    cached: bool = False


@dataclass(frozen=True)
class Job:
    """Everything a worker needs; plain data."""

    seed_dir: str
    project: str
    harness: dict  # HarnessSettings as JSON
    runs: int
    scratch: str  # snapshots are written to <scratch>/envs/<sha>.tar.gz
    cache_dir: str  # verdict cache
    passing: tuple[str, ...] = ()
    mutation: Mutation | None = None
    env_cache: str = ""  # where a registered project's environment (its env_spec) is kept; "" = the harness default


@lru_cache(maxsize=32)
def _seed(seed_dir: str) -> SeedProject:
    return load_seed(Path(seed_dir))


@lru_cache(maxsize=1)
def harness_digest() -> str:
    """Hash of the harness code: a changed harness invalidates cached verdicts."""
    root = Path(__file__).resolve().parents[1] / "harness"
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def write_snapshot(seed: SeedProject, tree: dict[str, bytes], scratch: Path) -> tuple[str, Path]:
    data = make_targz(tree, seed.name)
    sha = hashlib.sha256(data).hexdigest()
    path = scratch / "envs" / f"{sha}.tar.gz"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    return sha, path


def _harness_runs(seed: SeedProject, env: Path, job: Job) -> list[dict]:
    """`job.runs` harness runs of the snapshot with the empty patch: statuses, flags and the failures' output."""
    from evals.harness.instance import Instance
    from evals.harness.repoenv import EnvCache
    from evals.harness.testrun import run_tests

    settings = HarnessSettings.model_validate(job.harness)
    instance = Instance(
        instance_id=f"{seed.repo_dirname}-validation",
        repo=seed.repo,
        test_patch=seed.test_patch,
        environment=str(env),
        test_cmd=seed.test_cmd,
        env_spec=seed.env_spec,
    )
    envs = EnvCache(Path(job.env_cache)) if job.env_cache else None
    out: list[dict] = []
    for _ in range(job.runs):
        run = run_tests(instance, "", repos_dir=None, settings=settings, envs=envs)
        out.append(
            {
                "statuses": run.statuses,
                "timed_out": run.timed_out,
                "infra_error": run.infra_error,
                "tampering": run.tampering,
                "returncode": run.returncode,
                "log": failures_text(run.log) if not out else "",
            }
        )
        if run.infra_error or run.timed_out or run.returncode not in (0, 1):
            break
        if job.passing:  # a mutant that breaks no test (or every test) is rejected after one run
            ok = [run.statuses.get(t) in PASSING for t in job.passing]
            if all(ok) or not any(ok):
                break
    return out


def failures_text(log: str) -> str:
    """pytest's FAILURES / ERRORS sections (what a problem statement is written from), capped."""
    lines = log.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("=") and (" FAILURES " in l or " ERRORS " in l)), None)
    if start is None:
        return ""
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith("=") and "short test summary" in lines[i]),
        len(lines),
    )
    return "\n".join(lines[start:end])[:MAX_FAILURES_LOG]


def _cached_runs(seed: SeedProject, env_sha: str, env: Path, job: Job) -> tuple[list[dict], bool]:
    # Settings that cannot change a test's outcome are left out (the timeout too: a hang is a hang).
    settings = {
        k: v
        for k, v in job.harness.items()
        if k not in ("cache_dir", "work_dir", "workers", "keep_workdir", "timeout_s", "cpu_time_s", "max_log_kb")
    }
    key = hashlib.sha256(
        json.dumps(
            [
                env_sha,
                hashlib.sha256(seed.test_patch.encode()).hexdigest(),
                harness_digest(),
                settings,
                job.runs,
                sorted(job.passing),
                *([seed.test_cmd, seed.env_spec] if seed.test_cmd or seed.env_spec else []),
            ],
            sort_keys=True,
        ).encode()
    ).hexdigest()
    path = Path(job.cache_dir) / key[:2] / f"{key}.json"
    if path.exists():
        try:
            return json.loads(path.read_text()), True
        except (OSError, ValueError):
            pass
    runs = _harness_runs(seed, env, job)
    if not any(r["infra_error"] for r in runs):  # infrastructure errors are retried next time, never remembered
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(runs))
        tmp.replace(path)
    return runs, False


def baseline(job: Job) -> Baseline:
    """Clean project: tests that pass in every harness run, and the lines the suite executes."""
    start = time.monotonic()
    seed = _seed(job.seed_dir)
    sha, env = write_snapshot(seed, seed.source, Path(job.scratch))
    runs, _ = _cached_runs(seed, sha, env, job)
    problem = next((r["infra_error"] or "timed out" for r in runs if r["infra_error"] or r["timed_out"]), None)
    problem = problem or next(
        (f"exit code {r['returncode']}" for r in runs if r.get("returncode", 0) not in (0, 1)), None
    )
    if problem or len(runs) < job.runs:
        return Baseline(seed.name, [], [], {}, error=f"clean run failed: {problem}", seconds=time.monotonic() - start)
    names = set().union(*(r["statuses"] for r in runs))
    passing = sorted(n for n in names if all(r["statuses"].get(n) in PASSING for r in runs))
    unreliable = sorted(names - set(passing))
    flaky = [n for n in unreliable if len({r["statuses"].get(n) in PASSING for r in runs}) > 1]
    covered = _cached_coverage(seed, Path(job.cache_dir), job.env_cache)
    return Baseline(seed.name, passing, unreliable, covered, seconds=time.monotonic() - start, flaky=flaky)


def validate_candidate(job: Job) -> Verdict:
    start = time.monotonic()
    seed = _seed(job.seed_dir)
    mut = job.mutation
    assert mut is not None
    tree = dict(seed.source)
    tree[mut.path] = mut.apply(seed.source[mut.path].decode()).encode()
    sha, env = write_snapshot(seed, tree, Path(job.scratch))
    runs, cached = _cached_runs(seed, sha, env, job)

    def verdict(status: str, detail: str = "", f2p=(), p2p=()) -> Verdict:
        return Verdict(
            seed.name,
            mut,
            status,
            sha,
            list(f2p),
            list(p2p),
            runs[0]["log"] if status == KEPT else "",
            detail,
            time.monotonic() - start,
            cached,
        )

    first = runs[0]
    if first["infra_error"]:
        return verdict("infra_error", first["infra_error"])
    if any(r["timed_out"] for r in runs):
        return verdict("timed_out")
    if any(r["tampering"] for r in runs):
        return verdict("infra_error", "; ".join(first["tampering"]))
    crashed = [r["returncode"] for r in runs if r.get("returncode", 1) not in (0, 1)]
    if crashed:  # pytest did not end normally (a segfault, an internal error): a poor task whatever the statuses say
        return verdict("crashed", f"exit code {crashed[0]}")
    passing = list(job.passing)
    results = [{t: r["statuses"].get(t) in PASSING for t in passing} for r in runs]
    f2p = [t for t in passing if not results[0][t]]
    p2p = [t for t in passing if results[0][t]]
    if not f2p:
        return verdict("no_failing_test")
    if not p2p:
        return verdict("no_passing_test")
    if any(r != results[0] for r in results[1:]):
        flips = sorted(t for t in passing if len({r[t] for r in results}) > 1)
        return verdict("flaky", ", ".join(flips[:5]))
    return verdict(KEPT, f2p=f2p, p2p=p2p)


# ---------------------------------------------------------------------------------------------------------------------
# Line coverage of the clean suite (our own code, run outside the sandbox like any developer's test run).

_TRACE = r"""
import json, os, sys, threading
import pytest
plan = json.loads(sys.argv[1])
pkgs = tuple(os.path.join(os.getcwd(), p) + os.sep for p in plan["packages"])
hits = {}
def local(frame, event, arg):
    if event == "line":
        hits.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
    return local
def tracer(frame, event, arg):
    if not frame.f_code.co_filename.startswith(pkgs):
        return None
    hits.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
    return local
sys.settrace(tracer)
threading.settrace(tracer)
pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", *plan["args"]])
sys.settrace(None)
with open(sys.argv[2], "w") as fh:
    json.dump({os.path.relpath(k): sorted(v) for k, v in hits.items()}, fh)
"""


def _cached_coverage(seed: SeedProject, cache_dir: Path, env_cache: str = "") -> dict[str, list[int]]:
    path = cache_dir / "coverage" / f"{seed.digest}.json"
    if path.exists():
        return json.loads(path.read_text())
    covered = coverage(seed, site_packages=_env_site_packages(seed, env_cache))
    if covered:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(covered))
    return covered


def _env_site_packages(seed: SeedProject, env_cache: str) -> list[str]:
    """The site-packages of a registered project's built environment (what its tests import), if built here."""
    if not seed.env_spec or not env_cache:
        return []
    from evals.harness.instance import EnvSpec
    from evals.harness.repoenv import env_key

    venv = Path(env_cache) / env_key(EnvSpec.model_validate(seed.env_spec), "")
    return [str(p) for p in sorted(venv.glob("lib/python*/site-packages"))]


def _trace_args(seed: SeedProject) -> list[str]:
    if not seed.test_cmd:
        return ["tests"]
    words = shlex.split(seed.test_cmd)
    return [w for w in words[words.index("pytest") + 1 :] if w != "-rA"] if "pytest" in words else ["tests"]


def coverage(seed: SeedProject, timeout_s: float = 120.0, site_packages: Sequence[str] = ()) -> dict[str, list[int]]:
    """{module path: executed lines} for the clean suite; {} when it cannot be measured (then nothing is filtered).
    A registered project's suite runs with its environment's site-packages first on the path."""
    with tempfile.TemporaryDirectory(prefix="postgame-cov-") as tmp:
        root = Path(tmp) / "repo"
        write_tree({**seed.source, **seed.tests}, root)
        out = Path(tmp) / "coverage.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        if site_packages:
            env["PYTHONPATH"] = os.pathsep.join(site_packages)
        plan = json.dumps({"packages": list(seed.package_dirs), "args": _trace_args(seed)})
        try:
            subprocess.run(
                [sys.executable, "-c", _TRACE, plan, str(out)],
                cwd=root,
                env=env,
                timeout=timeout_s,
                capture_output=True,
                check=False,
            )
            return json.loads(out.read_text())
        except (subprocess.TimeoutExpired, OSError, ValueError):
            return {}
