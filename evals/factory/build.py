"""Build the task catalog: seed projects → mutants → harness-validated SWE-bench instances, in the object store.

    postgame factory build [--seed N] [--json]

Steps, each deterministic from the seed:
1. every seed project's clean suite runs through the harness twice (baseline) and once under a line tracer;
2. mutants of the covered lines, in a seeded order that deals operators round-robin, are validated in waves on a
   process pool until each project has `instances_per_project` or runs out of its `candidates_per_project`; the kept
   set is the first N valid candidates in that order, whatever the wave sizes;
3. each kept mutant becomes an instance: base = the project with the bug (without tests), gold `patch` = the diff
   that removes it, `test_patch` = the suite, FAIL_TO_PASS / PASS_TO_PASS from the harness runs, a problem
   statement written from the failing tests, the environment snapshot at `envs/<sha256>.tar.gz`;
4. one git repository per project (a clean commit on `main`, one commit per instance on top of it, tagged with the
   instance id) is shipped as a bundle, so that exported tasks can be evaluated with `--repos`;
5. `tasks/builds/<build_id>/{instances.jsonl,manifest.json,repos/*.bundle}`, and `tasks/current.json` names the build.

build_id = hash of the seed, the factory and harness code, the seed projects and the settings that shape the output:
an unchanged build is found in the store and not redone.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evals.factory.files import build_git_repo, diff_file
from evals.factory.mutate import Mutation, find_mutations
from evals.factory.seeds import SeedProject, default_seeds_dir, load_seeds, write_seed
from evals.factory.splits import assign_dev, assign_indomain, project_splits
from evals.factory.statements import statement_for
from evals.factory.verify import KEPT, Baseline, Job, Verdict, baseline, harness_digest, validate_candidate
from postgame.config import Config
from postgame.settings.factory import DEV, INDOMAIN, INSTANCE_SPLITS, FactorySettings
from postgame.settings.harness import HarnessSettings
from postgame.store import ObjectStore

SCHEMA = "postgame.tasks/1"


@dataclass
class ProjectReport:
    name: str
    repo: str
    split: str
    tests: int = 0
    candidates: int = 0  # mutants on covered lines, in seeded order, capped at candidates_per_project
    tried: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    clean_commit: str = ""
    error: str | None = None


@dataclass
class BuildResult:
    build_id: str
    seed: int
    instances: int
    per_split: dict[str, int]
    projects: dict[str, ProjectReport]
    seconds: float
    reused: bool = False
    manifest_uri: str = ""
    instances_sha256: str = ""
    verdicts_cached: int = 0  # mutants whose validation runs came from the verdict cache (not run by this build)

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        splits = ", ".join(f"{k} {v}" for k, v in self.per_split.items())
        tried = sum(p.tried for p in self.projects.values())
        how = (
            "found in the store"
            if self.reused
            else f"built in {self.seconds:.0f}s ({self.verdicts_cached} of {tried} mutants' verdicts cached)"
        )
        return f"tasks {self.build_id}: {self.instances} instances ({splits}) from {len(self.projects)} projects, {how}"


def build_tasks(
    cfg: Config, *, force: bool = False, seed: int | None = None, progress: Callable[[str], None] | None = None
) -> BuildResult:
    """`build` with the config's settings, store and cache (`<home>/cache/factory`, seeded with the shipped verdicts
    unless `factory.shipped_verdicts` is off: evals/factory/verdicts.py)."""
    from evals.factory.verdicts import seed_cache
    from postgame.runtime import store

    settings = cfg.factory if seed is None else cfg.factory.model_copy(update={"seed": seed})
    cache_dir = cfg.home / "cache" / "factory"
    if settings.shipped_verdicts:
        seed_cache(cache_dir / "validations")
    return build(settings, cfg.eval, store(cfg), cache_dir=cache_dir, force=force, progress=progress)


def ensure_built(cfg: Config) -> BuildResult:
    """The catalog for the configured seed: found in the store, else built."""
    return build_tasks(cfg)


def factory_digest() -> str:
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted([*root.glob("*.py"), root.parent / "prompts.py"]):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def build_id_for(settings: FactorySettings, seeds: list[SeedProject], harness: HarnessSettings, mined: str = "") -> str:
    shaping = settings.model_dump(mode="json", exclude={"workers", "simulate", "seeds_dir", "own", "shipped_verdicts"})
    if any(s.role for s in seeds):  # registered projects: how they are validated shapes the build too
        shaping["own"] = settings.own.model_dump(mode="json", exclude={"pip_download_args"})
    grading = harness.model_dump(
        mode="json", exclude={"workers", "cache_dir", "work_dir", "keep_workdir", "max_log_kb", "reruns", "timeout_s"}
    )
    parts = [shaping, grading, factory_digest(), harness_digest(), {s.name: s.digest for s in seeds}]
    payload = json.dumps(parts + ([mined] if mined else []), sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def limits(seed: SeedProject, settings: FactorySettings, split: str = "train") -> tuple[int, int]:
    """(candidates tried at most, instances kept at most) for one project of `split`: a registered repository's own;
    a guard project (eval, holdout) keeps `guard_instances_per_project` when that is set."""
    if seed.role:
        return settings.own.candidates_per_project, settings.own.instances_per_project
    if split != "train" and settings.guard_instances_per_project:
        return settings.candidates_per_project, min(
            settings.guard_instances_per_project, settings.instances_per_project
        )
    return settings.candidates_per_project, settings.instances_per_project


def candidate_order(seed: SeedProject, covered: dict[str, list[int]], settings: FactorySettings) -> list[Mutation]:
    """Mutants on executed lines, shuffled per operator by the seed and dealt round-robin across operators."""
    by_op: dict[str, list[Mutation]] = {}
    for path in seed.modules():
        lines = set(covered.get(path, [])) if covered else None
        for mut in find_mutations(seed.source[path].decode(), path, settings.operators or None):
            if lines is None or mut.line in lines:
                by_op.setdefault(mut.operator, []).append(mut)
    rng = random.Random(f"{settings.seed}:{seed.name}")
    ops = sorted(by_op)
    rng.shuffle(ops)
    for op in ops:
        rng.shuffle(by_op[op])
    order: list[Mutation] = []
    while any(by_op.values()):
        for op in ops:
            if by_op[op]:
                order.append(by_op[op].pop())
    return order[: limits(seed, settings)[0]]


def _report(data: dict) -> ProjectReport:
    return ProjectReport(**{k: v for k, v in data.items() if k in ProjectReport.__dataclass_fields__})


def _instance_id(seed: SeedProject, mut: Mutation) -> str:
    return f"{seed.repo_dirname}-{mut.key}"


def build(
    settings: FactorySettings,
    harness: HarnessSettings,
    store: ObjectStore,
    *,
    cache_dir: Path,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> BuildResult:
    """Build (or find) the catalog for `settings.seed`. See the module docstring."""
    say = progress or (lambda msg: None)
    start = time.monotonic()
    seeds_dir = Path(settings.seeds_dir) if settings.seeds_dir else default_seeds_dir()
    seeds = load_seeds(seeds_dir, settings.projects or None)
    if not seeds:
        raise ValueError(f"no seed projects found in {seeds_dir}")
    from evals.factory.mine import mined_records
    from evals.factory.projects import registered_seeds

    seeds += registered_seeds(settings, store, cache_dir)
    mined = {s.name: mined_records(settings, store, s.name) for s in seeds if s.role}
    mined_digest = hashlib.sha256(json.dumps(mined, sort_keys=True).encode()).hexdigest() if any(mined.values()) else ""
    build_id = build_id_for(settings, seeds, harness, mined_digest)
    prefix = f"{settings.store_prefix}/builds/{build_id}"
    if not force and store.exists(f"{prefix}/manifest.json"):
        manifest = json.loads(store.get(f"{prefix}/manifest.json"))
        _set_current(store, settings, build_id)
        say(f"build {build_id} is already in the store")
        return BuildResult(
            build_id,
            settings.seed,
            manifest["instances"],
            manifest["per_split"],
            {k: _report(v) for k, v in manifest["projects"].items()},
            time.monotonic() - start,
            reused=True,
            manifest_uri=store.url(f"{prefix}/manifest.json"),
            instances_sha256=manifest["instances_sha256"],
        )

    splits = project_splits(seeds, settings)
    reports = {s.name: ProjectReport(s.name, s.repo, splits[s.name]) for s in seeds}
    workers = settings.workers or os.cpu_count() or 1
    scratch = Path(tempfile.mkdtemp(prefix="postgame-factory-"))
    try:
        # Workers read the seeds as they were when the build started, even if someone edits them meanwhile.
        seeds_dir = scratch / "seeds"
        for seed in seeds:
            write_seed(seed, seeds_dir / seed.name)
        hs = harness.model_copy(
            update={"timeout_s": settings.timeout_s, "reruns": 0, "workers": 1, "cache_dir": scratch / "harness"}
        ).model_dump(mode="json")
        base_job: dict[str, Any] = dict(
            harness=hs, runs=settings.validation_runs, scratch=str(scratch), cache_dir=str(cache_dir / "validations")
        )
        own_hs = hs | {"timeout_s": settings.own.timeout_s}
        own_job = base_job | dict(harness=own_hs, env_cache=str(cache_dir / "envs"))
        job_kw = {s.name: own_job if s.role else base_job for s in seeds}
        with ProcessPoolExecutor(max_workers=workers) as pool:
            say(f"baseline of {len(seeds)} projects on {workers} workers")
            baselines: dict[str, Baseline] = {}
            jobs = [Job(seed_dir=str(seeds_dir / s.name), project=s.name, **job_kw[s.name]) for s in seeds]
            for b in pool.map(baseline, jobs):
                baselines[b.project] = b
                reports[b.project].tests = len(b.passing)
                reports[b.project].error = b.error or (None if b.passing else "no test passes on the clean project")
            live = [s for s in seeds if not reports[s.name].error]
            say(
                f"baseline done: {sum(r.tests for r in reports.values())} clean tests in {len(live)} projects"
                + "".join(f"; {r.name}: {r.error}" for r in reports.values() if r.error)
            )
            orders = {s.name: candidate_order(s, baselines[s.name].covered, settings) for s in live}
            for s in live:
                reports[s.name].candidates = len(orders[s.name])
            verdicts = _validate_in_waves(pool, live, orders, baselines, seeds_dir, job_kw, splits, settings, say)

        kept: dict[str, list[Verdict]] = {}
        for s in live:
            tried = verdicts[s.name]
            reports[s.name].tried = len(tried)
            reports[s.name].dropped = dict(Counter(v.status for v in tried if v.status != KEPT))
            kept[s.name] = [v for v in tried if v.status == KEPT][: limits(s, settings, splits[s.name])[1]]
            reports[s.name].kept = len(kept[s.name])

        say("writing instances, snapshots and repositories")
        instances = _assemble(live, kept, splits, settings, build_id, store, scratch, reports)
        for s in live:  # a project's real bugs from its history: its in-domain split (a guard project's own split)
            split = INDOMAIN if splits[s.name] == "train" else splits[s.name]
            instances += [{**r, "split": split, "build_id": build_id} for r in mined.get(s.name, [])]
        per_split = {split: sum(1 for i in instances if i["split"] == split) for split in INSTANCE_SPLITS}
        if not instances:
            raise RuntimeError(
                "the build produced no instances: "
                + "; ".join(f"{r.name}: {r.error or r.dropped}" for r in reports.values())
            )
        body = "".join(json.dumps(i, sort_keys=True) + "\n" for i in instances)
        store.put(f"{prefix}/instances.jsonl", body.encode())
        manifest = {
            "schema": SCHEMA,
            "build_id": build_id,
            "seed": settings.seed,
            "instances": len(instances),
            "per_split": per_split,
            "splits": splits,
            "projects": {k: asdict(v) for k, v in reports.items()},
            **{
                held: {
                    p: sorted(i["instance_id"] for i in instances if i["split"] == held and i["seed_project"] == p)
                    for p in sorted(reports)
                    if splits[p] == "train"
                }
                for held in (INDOMAIN, DEV)
            },
            "settings": settings.model_dump(mode="json", exclude={"simulate"}),
            "factory_digest": factory_digest(),
            "harness_digest": harness_digest(),
            "instances_sha256": hashlib.sha256(body.encode()).hexdigest(),
        }
        store.put(f"{prefix}/manifest.json", json.dumps(manifest, indent=2, sort_keys=True).encode())
        _set_current(store, settings, build_id)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return BuildResult(
        build_id,
        settings.seed,
        len(instances),
        per_split,
        reports,
        time.monotonic() - start,
        manifest_uri=store.url(f"{prefix}/manifest.json"),
        instances_sha256=manifest["instances_sha256"],
        verdicts_cached=sum(v.cached for tried in verdicts.values() for v in tried),
    )


def _validate_in_waves(
    pool: ProcessPoolExecutor,
    seeds: list[SeedProject],
    orders: dict[str, list[Mutation]],
    baselines: dict[str, Baseline],
    seeds_dir: Path,
    job_kw: dict[str, dict],
    splits: dict[str, str],
    settings: FactorySettings,
    say: Callable[[str], None],
) -> dict[str, list[Verdict]]:
    """Validate each project's candidates in order, a wave at a time, until it has enough kept or none left.
    Results are kept in candidate order, so the first N kept do not depend on how the waves were cut."""
    done: dict[str, list[Verdict]] = {s.name: [] for s in seeds}
    while True:
        wave: list[Job] = []
        for s in seeds:
            target = limits(s, settings, splits[s.name])[1]
            have = sum(v.status == KEPT for v in done[s.name])
            tried = len(done[s.name])
            if have >= target or tried >= len(orders[s.name]):
                continue
            rate = (have + 0.9) / (tried + 1)  # kept share so far, starting from a prior of 0.9
            size = max(2, math.ceil((target - have) / max(rate, 0.2)))
            for mut in orders[s.name][tried : tried + size]:
                wave.append(
                    Job(
                        seed_dir=str(seeds_dir / s.name),
                        project=s.name,
                        mutation=mut,
                        passing=tuple(baselines[s.name].passing),
                        **job_kw[s.name],
                    )
                )
        if not wave:
            return done
        futures = [pool.submit(validate_candidate, job) for job in wave]
        results: dict[int, Verdict] = {}
        index = {f: i for i, f in enumerate(futures)}
        for n, future in enumerate(as_completed(futures), start=1):
            results[index[future]] = future.result()
            if n % 25 == 0 or n == len(futures):
                tried = sum(map(len, done.values())) + n
                kept = sum(v.status == KEPT for vs in done.values() for v in vs) + sum(
                    v.status == KEPT for v in results.values()
                )
                say(f"validated {tried} candidates, {kept} kept")
        for i, job in enumerate(wave):  # in candidate order, whatever order they finished in
            done[job.project].append(results[i])


def _assemble(
    seeds: list[SeedProject],
    kept: dict[str, list[Verdict]],
    splits: dict[str, str],
    settings: FactorySettings,
    build_id: str,
    store: ObjectStore,
    scratch: Path,
    reports: dict[str, ProjectReport],
) -> list[dict]:
    instances: list[dict] = []
    repos = scratch / "repos"
    for seed in seeds:
        trees: dict[str, dict[str, bytes]] = {}
        records: list[dict] = []
        for v in kept[seed.name]:
            mut = v.mutation
            original = seed.source[mut.path].decode()
            buggy = mut.apply(original)
            inst_id = _instance_id(seed, mut)
            trees[inst_id] = {**seed.source, mut.path: buggy.encode()}
            key = f"{settings.envs_prefix}/{v.env_sha256}.tar.gz"
            if not store.exists(key):
                store.put(key, (scratch / "envs" / f"{v.env_sha256}.tar.gz").read_bytes())
            statement = statement_for(
                v.fail_to_pass,
                v.failures_log,
                seed.test_sources,
                package=seed.package,
                seed=f"{settings.seed}:{inst_id}",
            )
            records.append(
                {
                    "instance_id": inst_id,
                    "repo": seed.repo,
                    "base_commit": "",
                    "problem_statement": statement,
                    "hints_text": "",
                    "patch": diff_file(mut.path, buggy, original),
                    "test_patch": seed.test_patch,
                    "FAIL_TO_PASS": v.fail_to_pass,
                    "PASS_TO_PASS": v.pass_to_pass,
                    "version": "1",
                    "environment": store.url(key),
                    "environment_sha256": v.env_sha256,
                    "environment_setup_commit": "",
                    "split": splits[seed.name],
                    "seed_project": seed.name,
                    "mutation": mut.describe(),
                    "prompt_files": [mut.path],
                    "build_id": build_id,
                    **({"test_cmd": seed.test_cmd} if seed.test_cmd else {}),
                    **({"env_spec": seed.env_spec} if seed.env_spec else {}),
                }
            )
        clean, shas = build_git_repo(
            repos / seed.repo_dirname, seed.source, trees, f"{seed.name}: {seed.description}\n"
        )
        reports[seed.name].clean_commit = clean
        for rec in records:
            rec["base_commit"] = shas[rec["instance_id"]]
            rec["environment_setup_commit"] = clean
        if splits[seed.name] == "train":
            held_out = assign_indomain({seed.name: [r["instance_id"] for r in records]}, settings)
            dev = assign_dev({seed.name: sorted(held_out)}, settings)
            for rec in records:
                rec["split"] = (
                    DEV if rec["instance_id"] in dev else INDOMAIN if rec["instance_id"] in held_out else rec["split"]
                )
        bundle = scratch / f"{seed.repo_dirname}.bundle"
        subprocess.run(
            ["git", "-C", str(repos / seed.repo_dirname), "bundle", "create", "-q", str(bundle), "--all"],
            check=True,
            capture_output=True,
        )
        store.put(f"{settings.store_prefix}/builds/{build_id}/repos/{seed.repo_dirname}.bundle", bundle.read_bytes())
        instances += sorted(records, key=lambda r: r["instance_id"])
    return instances


def _set_current(store: ObjectStore, settings: FactorySettings, build_id: str) -> None:
    store.put(f"{settings.store_prefix}/current.json", json.dumps({"build_id": build_id}).encode())
