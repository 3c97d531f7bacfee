"""Reading the built catalog: instances by split, environments fetched from the store and hash-checked, exports.

    from evals.factory.instances import load_split
    train = load_split(cfg, "train")          # list[Instance], environment = a local, verified .tar.gz

The catalog is the build named by `<factory.store_prefix>/current.json` (written by `postgame factory build`).
Environments are cached under `<home>/cache/envs/<sha256>.tar.gz`; a cached or downloaded file whose sha256 does not
match its name is refused (and removed), never used.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evals.factory.files import read_targz
from evals.harness.instance import Instance
from postgame.config import Config
from postgame.errors import PostgameError
from postgame.runtime import store as open_store
from postgame.settings.factory import INSTANCE_SPLITS
from postgame.store import ObjectStore


class TasksNotBuilt(PostgameError):
    """No task catalog in the store (or the named build is missing): run `postgame factory build`."""


class EnvironmentCorrupt(PostgameError):
    """An environment snapshot's bytes do not match the sha256 in its name."""


def current_build_id(cfg: Config, store: ObjectStore | None = None) -> str:
    store = store or open_store(cfg)
    key = f"{cfg.factory.store_prefix}/current.json"
    if not store.exists(key):
        raise TasksNotBuilt(f"no task catalog in {store.uri} ({key} missing): run `postgame factory build`")
    return json.loads(store.get(key))["build_id"]


def load_manifest(cfg: Config, build_id: str | None = None, store: ObjectStore | None = None) -> dict:
    store = store or open_store(cfg)
    build_id = build_id or current_build_id(cfg, store)
    key = f"{cfg.factory.store_prefix}/builds/{build_id}/manifest.json"
    if not store.exists(key):
        raise TasksNotBuilt(f"build {build_id} not found in {store.uri} ({key} missing)")
    return json.loads(store.get(key))


def load_records(
    cfg: Config, split: str | None = None, *, build_id: str | None = None, store: ObjectStore | None = None
) -> list[dict]:
    """Instance records as stored (environment = the snapshot's store URI)."""
    store = store or open_store(cfg)
    build_id = build_id or current_build_id(cfg, store)
    key = f"{cfg.factory.store_prefix}/builds/{build_id}/instances.jsonl"
    if not store.exists(key):
        raise TasksNotBuilt(f"build {build_id} has no instances in {store.uri} ({key} missing)")
    records = [json.loads(line) for line in store.get(key).decode().splitlines() if line.strip()]
    if split is not None:
        splits = {r["split"] for r in records}
        if split not in splits | set(INSTANCE_SPLITS):
            raise ValueError(f"split {split!r} unknown; this build has {sorted(splits)}")
        records = [r for r in records if r["split"] == split]
    return records


def environment_path(cfg: Config, sha256: str, store: ObjectStore | None = None) -> Path:
    """The local copy of snapshot `sha256` (fetched once from the store), its hash verified."""
    path = cfg.home / "cache" / "envs" / f"{sha256}.tar.gz"
    if path.exists():
        if hashlib.sha256(path.read_bytes()).hexdigest() == sha256:
            return path
        path.unlink()
    store = store or open_store(cfg)
    data = store.get(f"{cfg.factory.envs_prefix}/{sha256}.tar.gz")
    if hashlib.sha256(data).hexdigest() != sha256:
        raise EnvironmentCorrupt(
            f"{store.url(f'{cfg.factory.envs_prefix}/{sha256}.tar.gz')}: content hash "
            f"{hashlib.sha256(data).hexdigest()} does not match its name"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
    return path


def load_split(cfg: Config, split: str | None = None, *, build_id: str | None = None) -> list[Instance]:
    """Instances of `split` (all when None), each `environment` a local verified `.tar.gz`; `environment_uri`
    keeps the store URI."""
    store = open_store(cfg)
    out = []
    for rec in load_records(cfg, split, build_id=build_id, store=store):
        local = environment_path(cfg, rec["environment_sha256"], store)
        out.append(Instance.model_validate({**rec, "environment_uri": rec["environment"], "environment": str(local)}))
    return out


def split_map(cfg: Config, *, build_id: str | None = None) -> dict[str, str]:
    """{instance_id: split} of the current build."""
    return {r["instance_id"]: r["split"] for r in load_records(cfg, build_id=build_id)}


def prompt_for(cfg: Config, instance: Instance) -> str:
    """The prompt the policy is shown for `instance` (an instance from `load_split`), as `policy.prompt_context`
    says: the same rendering for traffic, training and evaluation."""
    from evals.prompts import render_prompt

    return render_prompt(instance, prompt_files(instance), context=cfg.policy.prompt_context)


def prompt_files(instance: Instance) -> dict[str, str]:
    """The files the scaffold shows the policy for this task ({path: content} from its environment at base)."""
    files = read_targz(Path(instance.environment).read_bytes()) if instance.environment else {}
    names = getattr(instance, "prompt_files", None) or []
    return {name: files[name].decode() for name in names if name in files}


@dataclass
class ExportResult:
    split: str
    instances: int
    instances_path: Path
    repos_dir: Path


def export_split(
    cfg: Config, split: str, out: Path, *, build_id: str | None = None, project: str | None = None
) -> ExportResult:
    """Write `out/instances.jsonl` (SWE-bench format, gold patches included, no `environment`, so the harness reads
    `out/repos/<owner>__<name>` at `base_commit`) and those repositories, cloned from the build's bundles. A mined
    instance's base is a commit of the project's own history, not of the bundle: its snapshot is written to
    `out/envs/<sha256>.tar.gz` and named by `environment` (relative, resolved against the file). Instances of an
    added project keep their `env_spec` and `test_cmd`. `project` keeps only that project's instances."""
    store = open_store(cfg)
    build_id = build_id or current_build_id(cfg, store)
    records = load_records(cfg, split, build_id=build_id, store=store)
    if project is not None:
        known = {r["seed_project"] for r in load_records(cfg, build_id=build_id, store=store)}
        if project not in known:
            raise ValueError(f"project {project!r} is not in build {build_id} (projects: {', '.join(sorted(known))})")
        records = [r for r in records if r["seed_project"] == project]
    out = Path(out)
    repos = out / "repos"
    repos.mkdir(parents=True, exist_ok=True)
    for dirname in sorted({r["repo"].replace("/", "__") for r in records if not r.get("mined_from")}):
        dest = repos / dirname
        if dest.exists():
            shutil.rmtree(dest)
        with tempfile.TemporaryDirectory(prefix="postgame-bundle-") as tmp:
            bundle = Path(tmp) / f"{dirname}.bundle"
            bundle.write_bytes(store.get(f"{cfg.factory.store_prefix}/builds/{build_id}/repos/{dirname}.bundle"))
            subprocess.run(["git", "clone", "-q", str(bundle), str(dest)], check=True, capture_output=True)
            subprocess.run(["git", "-C", str(dest), "remote", "remove", "origin"], check=True, capture_output=True)
    lines = []
    for rec in records:
        rec = {**rec, "environment_uri": rec["environment"]}
        rec.pop("environment")
        if rec.get("mined_from"):
            snapshot = environment_path(cfg, rec["environment_sha256"], store)
            (out / "envs").mkdir(exist_ok=True)
            shutil.copyfile(snapshot, out / "envs" / snapshot.name)
            rec["environment"] = f"envs/{snapshot.name}"
        lines.append(json.dumps(rec, sort_keys=True))
    path = out / "instances.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return ExportResult(split, len(records), path, repos)
