"""Benchmark of the evaluation harness: its seconds per instance against the same tests run bare with pytest, as a
ratio in one run, and instances per minute with 1 and 2 workers.

    .venv/bin/python benchmarks/bench_harness.py [--reps 5] [--copies 2]

Per example instance (evals/harness/examples), interleaved, `--reps` times each, medians:
- harness: `evaluate(instance, gold)` end to end: fresh copy of the base, patch, grader protection, test patch,
  pytest in the sandbox (bwrap here, else rlimits: printed), grading;
- bare: `python -m pytest -rA <the same test files>` in a fresh checkout already holding the gold and test patches
  (a fresh copy per repetition, so neither side reuses bytecode written by an earlier run).
Medians and minimums of wall seconds are both reported: on a shared machine the minimum (least disturbed run) is the
steadier estimate of the overhead. Throughput: `run_evaluation` of every example's gold patch `--copies` times (distinct instance ids, no cache), with
1 and then 2 workers. The machine's core count and load average are printed with the numbers: other work on the
machine moves both sides of the ratio alike, not the throughput.

Real repositories (issue 9), on a folder of materialized instances (`scripts/realworld.py materialize` writes one):

    .venv/bin/python benchmarks/bench_harness.py --real DIR [--predictions DIR/gold.jsonl] [--reps 3] [--only ID,ID]
                                                 [--bare fresh|warm|strict]

DIR holds `instances.jsonl`, `repos/<owner>__<name>` and the predictions (default `gold.jsonl`). Each repetition,
interleaved: *harness* = the whole process `python -m postgame eval run ... --workers 1` (start-up, a fresh export of
every base: the checkout, copies, patches, sandboxed pytest, grading, reports), against *bare* = `python -m pytest
<the same arguments>` run one instance after another in ready checkouts (base + patch + test patch) with the
harness's Python: `--bare fresh` (default) a fresh copy per repetition without bytecode, plugin autoload on as a user
runs it; `warm` in the checkout itself, its bytecode written by an earlier run; `strict` warm and with plugin
autoload off, as the harness runs pytest (the least the harness could cost). Prints each repetition's totals and
ratio, the median ratio, and per instance the harness's own seconds (from its report) beside bare pytest's.
Instances with an `env_spec` run bare with their environment's python (built or fetched first, outside the
timing); those whose spec has an install command are left out of the comparison (their venv points at /testbed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.harness import HarnessSettings, Prediction, evaluate, load_instances, run_evaluation
from evals.harness.environment import base_tree, fresh_copy
from evals.harness.examples import INSTANCES_FILE
from evals.harness.examples.build import build_repos
from evals.harness.patching import apply_patch, patch_paths
from evals.harness.sandbox import choose_mode
from evals.harness.testrun import _test_files, pytest_args


def bare_checkout(instance, repos: Path, dest: Path) -> tuple[Path, list[str]]:
    base, source = base_tree(instance, repos)
    copy = fresh_copy(base, dest)
    for patch in (instance.patch, instance.test_patch):
        assert apply_patch(copy, patch, base_dir=base, source=source).applied
    return copy, pytest_args(instance, _test_files(copy, patch_paths(instance.test_patch)))


_CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def timed(argv: list[str], **kwargs) -> tuple[float, float | None]:
    """(wall seconds, CPU seconds of the command and everything it starts, sandboxes included, or None). CPU comes
    from a cgroup-v1 cpuacct group of its own (root): on a shared machine it does not depend on the neighbours."""
    group = _CPUACCT / f"postgame-bench-{os.getpid()}-{time.monotonic_ns()}"
    try:
        group.mkdir()
        argv = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs"), *argv]
    except OSError:
        group = None
    check = kwargs.pop("check", False)
    t = time.perf_counter()
    done = subprocess.run(argv, check=False, **kwargs)
    wall = time.perf_counter() - t
    cpu = None
    if group is not None:
        cpu = int((group / "cpuacct.usage").read_text()) / 1e9
        group.rmdir()
    if check:
        done.check_returncode()
    return wall, cpu


def real_repositories(folder: Path, predictions: Path | None, reps: int, only: set[str], bare_mode: str) -> None:
    """The whole-process harness against bare pytest on materialized real instances (see the module docstring)."""
    import json

    try:
        from evals.harness.repoenv import default_cache, ensure_env
    except ImportError:  # an older harness (before per-repository environments), for before/after numbers
        default_cache = ensure_env = None

    settings = HarnessSettings(timeout_s=600)
    instances = [i for i in load_instances(folder / "instances.jsonl") if not only or i.instance_id in only]
    preds = {
        json.loads(line)["instance_id"]: line
        for line in (predictions or folder / "gold.jsonl").read_text().splitlines()
        if line.strip()
    }
    spec = {i.instance_id: getattr(i, "env_spec", None) for i in instances}  # None on a harness without env_spec
    instances = [
        i for i in instances if i.instance_id in preds and not (spec[i.instance_id] and spec[i.instance_id].install)
    ]
    work = Path(tempfile.mkdtemp(prefix="bench-harness-real-"))
    try:
        (work / "instances.jsonl").write_text("".join(i.model_dump_json(exclude_none=True) + "\n" for i in instances))
        (work / "predictions.jsonl").write_text("".join(preds[i.instance_id] + "\n" for i in instances))
        ready: dict[str, tuple[Path, list[str], str]] = {}
        for inst in instances:  # ready checkouts, and each environment built before any timing
            patch = json.loads(preds[inst.instance_id]).get("model_patch") or ""
            base, source = base_tree(inst, folder / "repos")
            copy = fresh_copy(base, work / "ready" / inst.instance_id)
            for p in (patch, inst.test_patch):
                if p.strip():
                    assert apply_patch(copy, p, base_dir=base, source=source).applied, inst.instance_id
            python = sys.executable
            if spec[inst.instance_id] is not None and ensure_env is not None:
                python = str(ensure_env(inst, base, settings, default_cache(settings), []) / "bin" / "python")
            ready[inst.instance_id] = (copy, pytest_args(inst, _test_files(copy, patch_paths(inst.test_patch))), python)
        print(
            f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; sandbox: "
            f"{choose_mode(settings)[0]}; python {sys.version.split()[0]}; {len(instances)} instances from "
            f"{len({i.repo for i in instances})} repositories in {folder}"
        )
        root = str(Path(__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": root, "POSTGAME_HOME": str(work / "home")}
        totals, per_instance = [], {i.instance_id: ([], []) for i in instances}
        bare_env = {**os.environ, **({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"} if bare_mode == "strict" else {})}
        for copy, test_args, python in ready.values() if bare_mode != "fresh" else ():  # bytecode written once
            subprocess.run(
                [python, "-m", "pytest", *test_args],
                cwd=copy,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=bare_env,
                check=False,
            )
        for rep in range(reps):
            out = work / f"out-{rep}"
            harness, harness_cpu = timed(
                [
                    sys.executable,
                    "-m",
                    "postgame",
                    "eval",
                    "run",
                    "--instances",
                    str(work / "instances.jsonl"),
                    "--predictions",
                    str(work / "predictions.jsonl"),
                    "--repos",
                    str(folder / "repos"),
                    "--out",
                    str(out),
                    "--workers",
                    "1",
                    "--no-progress",
                    "--timeout",
                    "600",
                ],
                cwd=work,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            report = json.loads((out / "report.json").read_text())
            bare, bare_cpu = 0.0, 0.0
            for inst in instances:
                copy, test_args, python = ready[inst.instance_id]
                run_dir = work / f"bare-{rep}" / inst.instance_id if bare_mode == "fresh" else copy
                if bare_mode == "fresh":
                    shutil.copytree(copy, run_dir, symlinks=True)
                seconds, cpu = timed(
                    [python, "-m", "pytest", *test_args],
                    cwd=run_dir,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=bare_env,
                    check=False,
                )
                bare += seconds
                bare_cpu = bare_cpu + cpu if cpu is not None and bare_cpu is not None else None
                per_instance[inst.instance_id][0].append(report["instances"][inst.instance_id]["seconds"])
                per_instance[inst.instance_id][1].append(seconds)
                if bare_mode == "fresh":
                    shutil.rmtree(run_dir)
            totals.append((harness, bare, harness_cpu, bare_cpu))
            cpu_text = (
                f"; CPU {harness_cpu:.2f}s vs {bare_cpu:.2f}s, ratio {harness_cpu / bare_cpu:.2f}x"
                if harness_cpu is not None and bare_cpu
                else ""
            )
            print(
                f"rep {rep + 1}: harness (whole process) {harness:.2f}s, bare pytest ({bare_mode}) {bare:.2f}s, "
                f"ratio {harness / bare:.2f}x{cpu_text}; resolved {len(report['resolved_ids'])}/{len(instances)}; "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        med = statistics.median
        print("\n| instance | harness s (its report, median) | bare pytest s (median) | ratio |\n|---|---:|---:|---:|")
        for iid, (h, b) in per_instance.items():
            print(f"| {iid} | {med(h):.2f} | {med(b):.2f} | {med(h) / med(b):.2f}x |")
        ratios = [t[0] / t[1] for t in totals]
        print(
            f"\nwhole process, {len(instances)} instances, 1 worker, bare {bare_mode}: harness "
            f"{med([t[0] for t in totals]):.2f}s, bare {med([t[1] for t in totals]):.2f}s (medians); "
            f"wall ratio median **{med(ratios):.2f}x** (range {min(ratios):.2f}-{max(ratios):.2f}x); load average "
            f"{os.getloadavg()[0]:.2f} at end"
        )
        if all(t[2] is not None and t[3] for t in totals):
            cpu_ratios = [t[2] / t[3] for t in totals]
            print(
                f"CPU seconds: harness {med([t[2] for t in totals]):.2f}, bare {med([t[3] for t in totals]):.2f} "
                f"(medians); CPU ratio median **{med(cpu_ratios):.2f}x** (range {min(cpu_ratios):.2f}-"
                f"{max(cpu_ratios):.2f}x)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--real", type=Path, help="folder of materialized real instances (instances.jsonl, repos/)")
    parser.add_argument("--predictions", type=Path, help="with --real: predictions file (default DIR/gold.jsonl)")
    parser.add_argument("--only", default="", help="with --real: comma-separated instance ids")
    parser.add_argument(
        "--bare",
        choices=("fresh", "warm", "strict"),
        default="fresh",
        help="with --real: how bare pytest runs (see the module docstring)",
    )
    args = parser.parse_args()
    if args.real:
        real_repositories(args.real, args.predictions, args.reps, {i for i in args.only.split(",") if i}, args.bare)
        return
    settings = HarnessSettings(timeout_s=120)
    work = Path(tempfile.mkdtemp(prefix="bench-harness-"))
    try:
        repos = work / "repos"
        build_repos(repos)
        instances = load_instances(INSTANCES_FILE)
        print(
            f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; "
            f"sandbox: {choose_mode(settings)[0]}; python {sys.version.split()[0]}"
        )
        evaluate(instances[0], instances[0].patch, repos_dir=repos, settings=settings)  # warm: probe, exports

        rows = []
        for inst in instances:
            harness, bare = [], []
            checkout, test_args = bare_checkout(inst, repos, work / f"{inst.instance_id}-ref")
            for rep in range(args.reps):
                t = time.perf_counter()
                result = evaluate(inst, inst.patch, repos_dir=repos, settings=settings)
                harness.append(time.perf_counter() - t)
                assert result.resolved, result.log
                run_dir = work / f"{inst.instance_id}-bare-{rep}"
                shutil.copytree(checkout, run_dir, symlinks=True)
                t = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "pytest", *test_args],
                    cwd=run_dir,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                bare.append(time.perf_counter() - t)
                assert done.returncode == 0
                shutil.rmtree(run_dir)
            med = statistics.median
            rows.append((inst.instance_id, med(harness), med(bare), min(harness), min(bare)))

        print(
            "\n| instance | harness s (median) | bare pytest s (median) | ratio | harness s (min) | bare s (min) | ratio |"
            "\n|---|---:|---:|---:|---:|---:|---:|"
        )
        for iid, h, b, hm, bm in rows:
            print(f"| {iid} | {h:.3f} | {b:.3f} | {h / b:.2f}x | {hm:.3f} | {bm:.3f} | {hm / bm:.2f}x |")
        th, tb, thm, tbm = (sum(r[i] for r in rows) for i in range(1, 5))
        print(
            f"| **all (sums)** | {th:.3f} | {tb:.3f} | **{th / tb:.2f}x** | {thm:.3f} | {tbm:.3f} | **{thm / tbm:.2f}x** |"
        )

        batch = [
            inst.model_copy(update={"instance_id": f"{inst.instance_id}-{n}"})
            for n in range(args.copies)
            for inst in instances
        ]
        preds = [Prediction(instance_id=i.instance_id, model_patch=i.patch) for i in batch]
        print("\n| workers | instances | seconds | instances/min |\n|---:|---:|---:|---:|")
        for workers in (1, 2):
            t = time.perf_counter()
            report = run_evaluation(
                batch,
                preds,
                repos_dir=repos,
                out_dir=work / f"out-{workers}",
                settings=settings,
                workers=workers,
                progress=False,
            )
            seconds = time.perf_counter() - t
            assert len(report.resolved_ids) == len(batch), report.to_dict()
            print(f"| {workers} | {len(batch)} | {seconds:.1f} | {60 * len(batch) / seconds:.1f} |")
        print(f"\nload average {os.getloadavg()[0]:.2f} at end")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
