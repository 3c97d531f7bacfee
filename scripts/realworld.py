"""The real-world validation set (evals/realworld/): real bug-fix commits of public Python repositories, graded by
the harness. The repository holds only metadata; this script fetches the code by pinned commit and checks.

Materialise (clone each repository, derive the gold patch and the test patch from the pinned commits, write the
instances in SWE-bench format, gold, empty and no-op predictions):

    .venv/bin/python scripts/realworld.py materialize --mirrors /work/.mirror --out /tmp/realworld
    .venv/bin/python scripts/realworld.py materialize --network --out /tmp/realworld

`--mirrors DIR` reads DIR/<owner>+<name> (a git repository, bare or not, or a folder holding one as `repo/`, as the
search tool's `fetch` leaves them); `--network` clones https://github.com/<owner>/<name>.git. Writes
OUT/instances.jsonl, OUT/gold.jsonl, OUT/empty.jsonl, OUT/noop.jsonl and OUT/repos/<owner>__<name> (bare clones,
the layout `postgame eval run --repos` reads). `--only ID,ID` limits it to some instances. The no-op prediction adds
one text file and changes no code: the harness grades an empty patch unresolved without running anything, so the
no-op one is what shows, through the harness, that the base really fails FAIL_TO_PASS.

Check (runs `postgame eval run`, 1 worker, on the gold, empty and no-op predictions and prints the table):

    .venv/bin/python scripts/realworld.py check --out /tmp/realworld [--only ID,ID] [--timeout S (default 300)]

Prints one row per instance (instance, repo, style, gold / empty / no-op resolved?, seconds of the gold and no-op runs,
why gold is unresolved where it is) and the totals "gold N/N, empty 0/N, no-op 0/N"; writes OUT/check.json. Exits 0
when gold resolves every instance and empty and no-op none, else 1.
Config as for `postgame` (`$POSTGAME_CONFIG`, `./postgame.yaml`, `POSTGAME_EVAL__*`); `postgame eval run` keeps no
grade cache, so every row is a real run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METADATA = ROOT / "evals" / "realworld" / "metadata.jsonl"
PREDICTIONS = ("gold", "empty", "noop")
# Applies everywhere, changes no code: the base's own test results, seen through the whole harness.
NOOP_PATCH = (
    "diff --git a/REALWORLD_NOOP.txt b/REALWORLD_NOOP.txt\nnew file mode 100644\n--- /dev/null\n"
    "+++ b/REALWORLD_NOOP.txt\n@@ -0,0 +1 @@\n+a prediction that changes no code\n"
)
STYLES = ("unittest-subtests", "pytest", "doctest", "class-based", "dependencies")


class RealWorldError(Exception):
    """The set cannot be materialised or checked; the message names the repository or instance and the reason."""


def load_metadata(path: Path = METADATA) -> list[dict]:
    """The set's records, one JSON object a line (see evals/realworld/README.md for the fields)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _git(*args: str, git_dir: Path | None = None, check: bool = True) -> str:
    cmd = ["git", "-c", "safe.directory=*"] + (["--git-dir", str(git_dir)] if git_dir else []) + list(args)
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise RealWorldError(f"{' '.join(cmd)}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


def _mirror_source(mirrors: Path, repo: str) -> Path:
    folder = mirrors / repo.replace("/", "+")
    for candidate in (folder / "repo", folder):
        if candidate.is_dir() and _git("rev-parse", "--git-dir", git_dir=_git_dir(candidate), check=False).strip():
            return candidate
    raise RealWorldError(
        f"{repo}: no git repository at {folder} (fetch it with the search tool's fetch, or use --network)"
    )


def _git_dir(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def clone(repo: str, clone_url: str, commits: list[str], dest: Path, mirrors: Path | None) -> None:
    """A bare clone of `repo` at `dest` that holds every commit in `commits` (fetched by hash where it must be)."""
    if not dest.exists():
        source = str(_mirror_source(mirrors, repo)) if mirrors else clone_url
        _git("clone", "--bare", "--quiet", source, str(dest))
    missing = [c for c in dict.fromkeys(commits) if not _has_commit(dest, c)]
    if missing:  # not reachable from a branch or tag of the source: GitHub serves reachable commits by hash
        _git("fetch", "--quiet", "origin", *missing, git_dir=dest)


def _has_commit(git_dir: Path, commit: str) -> bool:
    return (
        subprocess.run(
            ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"],
            check=False,
            capture_output=True,
        ).returncode
        == 0
    )


def _diff(git_dir: Path, base: str, fix: str, paths: list[str]) -> str:
    if not paths:
        return ""
    return _git(
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-renames",
        "--full-index",
        "--binary",
        base,
        fix,
        "--",
        *paths,
        git_dir=git_dir,
    )


def build_instance(meta: dict, git_dir: Path) -> dict:
    """The SWE-bench instance of one record: gold patch = the fix's non-test files, test patch = its test files."""
    base, fix = meta["base_commit"], meta["fix_commit"]
    parent = _git("rev-parse", f"{fix}^", git_dir=git_dir).strip()
    if parent != base:
        raise RealWorldError(
            f"{meta['instance_id']}: base_commit {base} is not the parent of fix_commit {fix} ({parent})"
        )
    changed = _git("diff", "--name-only", "--no-renames", base, fix, git_dir=git_dir).split("\n")
    changed = [p for p in changed if p]
    tests = set(meta["test_files"])
    if not tests <= set(changed):
        raise RealWorldError(f"{meta['instance_id']}: test files {sorted(tests - set(changed))} are not in the fix")
    patch = _diff(git_dir, base, fix, [p for p in changed if p not in tests])
    test_patch = _diff(git_dir, base, fix, [p for p in changed if p in tests])
    if not patch.strip() or not test_patch.strip():
        raise RealWorldError(f"{meta['instance_id']}: empty {'patch' if not patch.strip() else 'test_patch'}")
    instance = {
        "instance_id": meta["instance_id"],
        "repo": meta["repo"],
        "base_commit": base,
        "patch": patch,
        "test_patch": test_patch,
        "problem_statement": meta["problem_statement"],
        "hints_text": "",
        "created_at": meta["created_at"],
        "version": "",
        "FAIL_TO_PASS": json.dumps(meta["FAIL_TO_PASS"]),
        "PASS_TO_PASS": json.dumps(meta["PASS_TO_PASS"]),
        "environment_setup_commit": base,
        "style": meta["style"],
        "fix_commit": fix,
    }
    if meta.get("test_cmd"):
        instance["test_cmd"] = meta["test_cmd"]
    if meta.get("env_spec"):
        instance["env_spec"] = meta["env_spec"]
    return instance


def _only(records: list[dict], only: str | None) -> list[dict]:
    if not only:
        return records
    wanted = set(only.split(","))
    unknown = wanted - {r["instance_id"] for r in records}
    if unknown:
        raise RealWorldError(f"--only: unknown instance ids {sorted(unknown)}")
    return [r for r in records if r["instance_id"] in wanted]


def materialize(out: Path, mirrors: Path | None, only: str | None = None) -> list[dict]:
    records = _only(load_metadata(), only)
    repos = out / "repos"
    repos.mkdir(parents=True, exist_ok=True)
    instances = []
    for repo in dict.fromkeys(r["repo"] for r in records):
        mine = [r for r in records if r["repo"] == repo]
        dest = repos / repo.replace("/", "__")
        print(f"{repo}: {len(mine)} instance(s) -> {dest}", file=sys.stderr)
        clone(repo, mine[0]["clone_url"], [c for r in mine for c in (r["base_commit"], r["fix_commit"])], dest, mirrors)
        instances += [build_instance(r, dest) for r in mine]
    _write_jsonl(out / "instances.jsonl", instances)
    _write_jsonl(
        out / "gold.jsonl",
        [{"instance_id": i["instance_id"], "model_name_or_path": "gold", "model_patch": i["patch"]} for i in instances],
    )
    _write_jsonl(
        out / "empty.jsonl",
        [{"instance_id": i["instance_id"], "model_name_or_path": "empty", "model_patch": ""} for i in instances],
    )
    _write_jsonl(
        out / "noop.jsonl",
        [{"instance_id": i["instance_id"], "model_name_or_path": "noop", "model_patch": NOOP_PATCH} for i in instances],
    )
    print(f"wrote {len(instances)} instances to {out / 'instances.jsonl'}", file=sys.stderr)
    return instances


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@dataclass
class Row:
    instance_id: str
    repo: str
    style: str
    gold_resolved: bool
    empty_resolved: bool
    noop_resolved: bool
    noop_tests: str  # "F2P failing a/b, P2P passing c/d" in the no-op run: the base as the metadata says it is
    gold_s: float
    noop_s: float
    note: str


def _eval_run(out: Path, instances: Path, predictions: Path, name: str, timeout: float | None) -> dict:
    run_dir = out / "runs" / name
    cmd = [
        sys.executable,
        "-m",
        "postgame",
        "eval",
        "run",
        "--instances",
        str(instances),
        "--predictions",
        str(predictions),
        "--repos",
        str(out / "repos"),
        "--out",
        str(run_dir),
        "--workers",
        "1",
        "--no-progress",
    ]
    if timeout:
        cmd += ["--timeout", str(timeout)]
    # This checkout's postgame, not whichever one is installed in the venv.
    pythonpath = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": pythonpath}
    print("$ " + " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, check=False, env=env, cwd=ROOT, text=True, capture_output=True)
    sys.stderr.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise RealWorldError(f"postgame eval run ({name}) exited {proc.returncode}")
    return json.loads((run_dir / "report.json").read_text(encoding="utf-8"))


def _note(report: dict, log: Path) -> str:
    """Why an instance is unresolved, in a few words: harness error, tampering verdict, collection error, or tests."""
    if report.get("error"):
        return f"error: {report['error']}"[:120]
    if report.get("tampering"):
        return f"tampering: {report['tampering'][0]}"[:120]
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    collect = next((line for line in text.splitlines() if line.startswith("collection error in ")), "")
    if collect:
        return collect[:120]
    failing = [
        t
        for key in ("FAIL_TO_PASS", "PASS_TO_PASS")
        for t in report.get("tests_status", {}).get(key, {}).get("failure", [])
    ]
    return f"{len(failing)} failing, e.g. {failing[0]}"[:120] if failing else ""


def check(out: Path, only: str | None, timeout: float | None) -> list[Row]:
    # instance_dir_name: where `postgame eval run` writes an instance's logs.
    sys.path.insert(0, str(ROOT))
    from evals.harness.run import instance_dir_name

    all_instances = [json.loads(line) for line in (out / "instances.jsonl").read_text().splitlines() if line.strip()]
    instances = _only(all_instances, only)
    ids = {i["instance_id"] for i in instances}
    work = out / "check"
    work.mkdir(parents=True, exist_ok=True)
    _write_jsonl(work / "instances.jsonl", instances)
    reports = {}
    for name in PREDICTIONS:
        preds = [json.loads(line) for line in (out / f"{name}.jsonl").read_text().splitlines() if line.strip()]
        _write_jsonl(work / f"{name}.jsonl", [p for p in preds if p["instance_id"] in ids])
        reports[name] = _eval_run(out, work / "instances.jsonl", work / f"{name}.jsonl", name, timeout)["instances"]
    rows = []
    for inst in instances:
        iid = inst["instance_id"]
        gold, empty, noop = (reports[name].get(iid, {}) for name in PREDICTIONS)
        note = (
            ""
            if gold.get("resolved")
            else _note(gold, out / "runs" / "gold" / instance_dir_name(iid) / "test_output.txt")
        )
        status = noop.get("tests_status", {})
        f2p, p2p = status.get("FAIL_TO_PASS", {}), status.get("PASS_TO_PASS", {})
        n_f2p = len(f2p.get("success", [])) + len(f2p.get("failure", []))
        n_p2p = len(p2p.get("success", [])) + len(p2p.get("failure", []))
        noop_tests = f"{len(f2p.get('failure', []))}/{n_f2p}, {len(p2p.get('success', []))}/{n_p2p}"
        rows.append(
            Row(
                iid,
                inst["repo"],
                inst.get("style", ""),
                bool(gold.get("resolved")),
                bool(empty.get("resolved")),
                bool(noop.get("resolved")),
                noop_tests,
                float(gold.get("seconds", 0.0)),
                float(noop.get("seconds", 0.0)),
                note,
            )
        )
    (out / "check.json").write_text(json.dumps([asdict(r) for r in rows], indent=2), encoding="utf-8")
    return rows


def print_table(rows: list[Row]) -> None:
    print(
        "| instance | repo | style | gold resolved | empty resolved | no-op resolved "
        "| no-op: F2P failing, P2P passing | gold s | no-op s | note |"
    )
    print("|---|---|---|---|---|---|---|---:|---:|---|")
    for r in rows:
        print(
            f"| {r.instance_id} | {r.repo} | {r.style} | {'yes' if r.gold_resolved else 'NO'} | "
            f"{'YES' if r.empty_resolved else 'no'} | {'YES' if r.noop_resolved else 'no'} | {r.noop_tests} | "
            f"{r.gold_s:.1f} | {r.noop_s:.1f} | {r.note} |"
        )
    n = len(rows)
    print(
        f"\ngold {sum(r.gold_resolved for r in rows)}/{n}, empty {sum(r.empty_resolved for r in rows)}/{n}, "
        f"no-op {sum(r.noop_resolved for r in rows)}/{n}; {sum(r.gold_s + r.noop_s for r in rows):.1f}s of "
        "harness runs"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    mat = sub.add_parser("materialize", help="clone by pinned commit and write the SWE-bench instances")
    source = mat.add_mutually_exclusive_group(required=True)
    source.add_argument("--mirrors", type=Path, help="folder of local mirrors named <owner>+<name>")
    source.add_argument("--network", action="store_true", help="clone from GitHub")
    mat.add_argument("--out", type=Path, required=True)
    mat.add_argument("--only", default=None, help="comma-separated instance ids")
    chk = sub.add_parser("check", help="grade gold, empty and no-op predictions with `postgame eval run`")
    chk.add_argument("--out", type=Path, required=True, help="the folder materialize wrote")
    chk.add_argument("--only", default=None, help="comma-separated instance ids")
    chk.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="seconds per test run (default 300: more-itertools' suite alone took up to 61 s of harness "
        "time on a loaded 2-core machine, past eval.timeout_s's default of 60)",
    )
    args = parser.parse_args()
    try:
        if args.command == "materialize":
            materialize(args.out, None if args.network else args.mirrors, args.only)
            return 0
        start = time.monotonic()
        rows = check(args.out, args.only, args.timeout)
        print_table(rows)
        print(f"wall {time.monotonic() - start:.1f}s", file=sys.stderr)
        return 0 if all(r.gold_resolved and not r.empty_resolved and not r.noop_resolved for r in rows) else 1
    except RealWorldError as exc:
        print(f"realworld: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
