"""Real bugs from a registered project's own history, SWE-bench's way: `postgame factory mine NAME [--max N] [--json]`.

Walk the first-parent history back from the pinned commit, newest first (a merged pull request is its merge
commit against the first parent: the whole change as it landed). A commit is a candidate when it changes
both the project's code (a `.py` file in one of its packages) and its suite (files under its test folders); it is
split into a gold `patch` (every non-test file it changes) and a `test_patch` (its test files). Both sides run in the
project's environment through the harness, `factory.own.mine_runs` times each: the base with the test patch, then
the base with the test patch and the gold patch, pytest over the test files the commit touches.

FAIL_TO_PASS = tests that *ran and failed* at base in every run and passed with the fix in every run. A test that
only fails because its module cannot be imported at base (a collection error, or an ImportError / "cannot import
name" in its failure: the test imports a name the fix adds) is not a genuine FAIL_TO_PASS. PASS_TO_PASS = the
touched files' tests passing in every run on both sides. Tests whose result changes between runs of one side are
flaky and dropped. A commit is kept with at least one FAIL_TO_PASS.

Kept instances join the project's in-domain split (`indomain`: evaluated, never trained on): stored at
`<factory.store_prefix>/projects/<name>/mined.jsonl`, each base a content-addressed snapshot `envs/<sha256>.tar.gz`
(the tree at the parent commit without .git, and the project's generated files), carrying `test_cmd` and `env_spec`.
The next `factory build` adds them to the catalog.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from evals.factory.files import make_targz
from evals.factory.projects import Project, _git, _prefix, load_project, project_harness
from evals.factory.statements import failure_sections, section_title, statement_for
from evals.factory.verify import failures_text
from evals.harness.constants import PASSING
from evals.harness.instance import Instance
from evals.harness.repoenv import EnvCache
from postgame.settings.factory import INDOMAIN, FactorySettings
from postgame.settings.harness import HarnessSettings
from postgame.store import ObjectStore

IMPORT_FAILURE = ("ImportError", "ModuleNotFoundError", "cannot import name")


@dataclass
class MineResult:
    project: str
    commits_examined: int
    kept: int
    instance_ids: list[str]
    dropped: dict[str, int]
    seconds: float = 0.0
    candidates: int = 0

    def summary(self) -> str:
        why = ", ".join(f"{k} {v}" for k, v in sorted(self.dropped.items())) or "none"
        return (
            f"mined {self.project}: {self.kept} kept of {self.candidates} candidate commits "
            f"({self.commits_examined} examined; dropped: {why}) in {self.seconds:.0f}s"
        )


@dataclass
class _Verdict:
    commit: str
    status: str  # kept | a drop reason
    record: dict = field(default_factory=dict)


def _tree(repo: Path, commit: str) -> dict[str, bytes]:
    names = _git("ls-tree", "-r", "-z", "--name-only", commit, cwd=repo).split("\0")
    out = {}
    for name in filter(None, names):
        proc = subprocess.run(
            ["git", "-c", "safe.directory=*", "show", f"{commit}:{name}"], cwd=repo, capture_output=True, check=False
        )
        if proc.returncode == 0:
            out[name] = proc.stdout
    return out


def _diff(repo: Path, base: str, commit: str, paths: list[str]) -> str:
    """The diff as git wrote it: read as bytes, since text mode would turn a CRLF file's lines into LF ones and the
    patch would no longer apply to it (raises UnicodeDecodeError for a diff that is not UTF-8)."""
    if not paths:
        return ""
    proc = subprocess.run(
        [
            "git",
            "-c",
            "safe.directory=*",
            "diff",
            "--no-color",
            "--no-renames",
            "--full-index",
            base,
            commit,
            "--",
            *paths,
        ],
        cwd=repo,
        capture_output=True,
        check=True,
    )
    return proc.stdout.decode("utf-8")


def _test_cmd(project: Project, files: list[str]) -> str:
    """The project's test command with its targets replaced by the commit's test files."""
    words = shlex.split(project.test_cmd)
    targets = {t.rstrip("/") for t in project.tests}
    return shlex.join([w for w in words if w not in targets] + files)


def _is_test(project: Project, path: str) -> bool:
    return path.startswith(tuple(project.tests)) or path.rsplit("/", 1)[-1].startswith("test_")


def candidates(project: Project, repo: Path, limit: int) -> tuple[list[tuple[str, str, list[str], list[str]]], int]:
    """([(parent, commit, source files, test files)] newest first, commits examined)."""
    commits = _git("rev-list", "--first-parent", f"--max-count={limit}", project.commit, cwd=repo)
    out = []
    examined = 0
    for commit in commits.split():
        examined += 1
        parents = _git("rev-list", "--parents", "-n", "1", commit, cwd=repo).split()[1:]
        if not parents:
            continue  # the root commit
        changed = [
            p for p in _git("diff", "--name-only", "--no-renames", parents[0], commit, cwd=repo).split("\n") if p
        ]
        tests = [p for p in changed if _is_test(project, p)]
        source = [
            p
            for p in changed
            if p not in tests and p.endswith(".py") and p.startswith(tuple(f"{d}/" for d in project.packages))
        ]
        if source and tests:
            out.append((parents[0], commit, [p for p in changed if p not in tests], tests))
    return out, examined


def _judge(
    project: Project,
    repo: Path,
    cand: tuple[str, str, list[str], list[str]],
    settings: FactorySettings,
    harness: HarnessSettings,
    envs: EnvCache,
    scratch: Path,
) -> _Verdict:
    from evals.harness.testrun import run_tests

    parent, commit, source_files, test_files = cand
    tree = _tree(repo, parent)
    if not any(name.startswith(tuple(f"{d}/" for d in project.packages)) for name in tree):
        return _Verdict(commit, "layout_differs")  # the package lived elsewhere then
    for rel in project.generated:
        tree.setdefault(
            rel, f'__version__ = version = "0+{parent[:12]}"\n__version_tuple__ = version_tuple = (0,)\n'.encode()
        )
    try:
        patch = _diff(repo, parent, commit, source_files)
        test_patch = _diff(repo, parent, commit, test_files)
    except UnicodeDecodeError:
        return _Verdict(commit, "binary_patch")
    if "GIT binary patch" in patch + test_patch or "Binary files" in patch + test_patch:
        return _Verdict(commit, "binary_patch")
    after = _tree(repo, commit)
    runnable = [p for p in test_files if p.endswith(".py") and p.rsplit("/", 1)[-1].startswith("test") and p in after]
    if not runnable:
        return _Verdict(commit, "no_test_module")
    snapshot = make_targz(tree, project.name)
    sha = hashlib.sha256(snapshot).hexdigest()
    env_path = scratch / "envs" / f"{sha}.tar.gz"
    env_path.parent.mkdir(parents=True, exist_ok=True)
    env_path.write_bytes(snapshot)
    inst = Instance(
        instance_id=f"{project.repo.replace('/', '__')}-mined-{commit[:10]}",
        repo=project.repo,
        base_commit=parent,
        patch=patch,
        test_patch=test_patch,
        test_cmd=_test_cmd(project, runnable),
        environment=str(env_path),
        env_spec=project.env_spec,
    )
    sides: dict[str, list[dict[str, str]]] = {"base": [], "gold": []}
    base_log = ""
    for side, diff in (("base", ""), ("gold", patch)):
        for _ in range(settings.own.mine_runs):
            run = run_tests(inst, diff, repos_dir=None, settings=harness, envs=envs)
            if run.infra_error:
                why = "test_patch_does_not_apply" if "test_patch" in run.infra_error else "infra_error"
                return _Verdict(commit, why, {"detail": run.infra_error[:300]})
            if side == "gold" and not run.patch_applied:
                return _Verdict(commit, "gold_does_not_apply")
            if run.timed_out:
                return _Verdict(commit, "timed_out")
            sides[side].append(run.statuses)
            if side == "base" and not base_log:
                base_log = failures_text(run.log)
            if side == "base" and all(s in PASSING for s in run.statuses.values()):
                return _Verdict(commit, "no_fail_to_pass")  # nothing fails at base: no run of the fix can help
    names = sorted(set().union(*sides["base"], *sides["gold"]))

    def steady(side: str, name: str) -> bool | None:  # passed in every run / failed in every run / None = flaky
        results = {runs.get(name) in PASSING for runs in sides[side]}
        return results.pop() if len(results) == 1 else None

    sections = failure_sections(base_log)
    f2p, p2p, flaky, imports = [], [], 0, 0
    for name in names:
        base, gold = steady("base", name), steady("gold", name)
        if base is None or gold is None:
            flaky += 1
        elif base is False and gold:
            ran = all(name in runs for runs in sides["base"])  # absent at base = its module did not even collect
            text = "\n".join(sections.get(section_title(name), []))
            if ran and not any(marker in text for marker in IMPORT_FAILURE):
                f2p.append(name)
            else:
                imports += 1
        elif base and gold:
            p2p.append(name)
    if not f2p:
        return _Verdict(commit, "import_only" if imports else ("flaky" if flaky else "no_fail_to_pass"))
    tests_text = {p: after[p].decode("utf-8", "replace") for p in runnable}
    record = {
        **inst.model_dump(mode="json", exclude={"environment"}),
        "FAIL_TO_PASS": f2p,
        "PASS_TO_PASS": p2p,
        "problem_statement": statement_for(
            f2p, base_log, tests_text, package=project.packages[0].rsplit("/")[-1], seed=commit
        ),
        "hints_text": "",
        "environment_sha256": sha,
        "environment_setup_commit": parent,
        "split": INDOMAIN,
        "seed_project": project.name,
        "mutation": {"operator": "mined", "path": source_files[0], "line": 0, "original": commit, "replacement": ""},
        "mined_from": commit,
        "prompt_files": [p for p in source_files if p.endswith(".py") and p in tree],
        "version": "",
    }
    return _Verdict(commit, "kept", record)


def mine_project(
    name: str,
    settings: FactorySettings,
    harness: HarnessSettings,
    store: ObjectStore,
    *,
    cache_dir: Path,
    max_kept: int = 20,
    max_commits: int = 1000,
    progress: Callable[[str], None] | None = None,
) -> MineResult:
    """Mine up to `max_kept` instances from `name`'s history (see the module docstring); they replace the project's
    earlier mined set."""
    say = progress or (lambda msg: None)
    start = time.monotonic()
    project = load_project(settings, store, name)
    scratch = Path(tempfile.mkdtemp(prefix="postgame-mine-"))
    try:
        bundle = scratch / "repo.bundle"
        bundle.write_bytes(store.get(f"{_prefix(settings, name)}/repo.bundle"))
        repo = scratch / "repo"
        _git("clone", "--quiet", "--bare", str(bundle), str(repo))
        cands, examined = candidates(project, repo, max_commits)
        say(f"{examined} commits examined, {len(cands)} change both code and tests")
        hs = project_harness(harness, settings, scratch)
        envs = EnvCache(cache_dir / "envs")
        verdicts: list[_Verdict] = []
        workers = max(1, settings.workers or 2)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for i in range(0, len(cands), workers * 2):
                batch = cands[i : i + workers * 2]
                verdicts += pool.map(lambda c: _judge(project, repo, c, settings, hs, envs, scratch), batch)
                kept_now = sum(v.status == "kept" for v in verdicts)
                say(f"{len(verdicts)} candidates run, {kept_now} kept")
                if kept_now >= max_kept:
                    break
        kept = [v for v in verdicts if v.status == "kept"][:max_kept]
        dropped = Counter(v.status for v in verdicts if v.status != "kept")
        dropped["not_code_and_tests"] = examined - len(cands)
        for v in kept:
            sha = v.record["environment_sha256"]
            key = f"{settings.envs_prefix}/{sha}.tar.gz"
            if not store.exists(key):
                store.put(key, (scratch / "envs" / f"{sha}.tar.gz").read_bytes())
            v.record["environment"] = store.url(key)
        body = "".join(json.dumps(v.record, sort_keys=True) + "\n" for v in kept)
        store.put(f"{_prefix(settings, name)}/mined.jsonl", body.encode())
        return MineResult(
            name,
            examined,
            len(kept),
            [v.record["instance_id"] for v in kept],
            dict(sorted(dropped.items())),
            time.monotonic() - start,
            len(cands),
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def mined_records(settings: FactorySettings, store: ObjectStore, name: str) -> list[dict]:
    key = f"{_prefix(settings, name)}/mined.jsonl"
    if not store.exists(key):
        return []
    return [json.loads(line) for line in store.get(key).decode().splitlines() if line.strip()]


def to_dict(result: MineResult) -> dict:
    return asdict(result)
