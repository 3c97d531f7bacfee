"""Lineage: follow a model version back to the raw log objects it learned from, and check every hop on the way.

    postgame lineage VERSION [--json]        # VERSION: a number, or an alias such as `champion`

    model version (checkpoint sha256) → eval report (sha256) → training run (dataset sha256, parent, code, config)
      → curated dataset (datasets/<sha256>.jsonl) → validated snapshot(s) (content-addressed manifests)
      → log objects (key, ETag, size)

Every artifact is pinned by a URI and a hash: the checkpoint files by `checkpoint.sha256` and the evaluation report by
`eval.report_sha256` (tags on the training run, set where they are produced), the dataset by its sha256 (its name),
a snapshot by its id (the sha256 of its content) and the sha256 of its data file, a log object by its ETag and size.
A hop is `ok` only when its URI resolves now and what it holds still matches the recorded hash; a broken hop says why.
Each hop also carries the code version and config hash recorded where that artifact was made (None: not recorded).

A snapshot replaced by its re-redacted successor (`postgame redact`) keeps its place in the chain: its hop says
"superseded by <id> (redacted on <date>)", and the successor's hops (checked as any snapshot's) follow it.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from postgame.config import Config

CHECKPOINT_TAG = "checkpoint.sha256"
EVAL_REPORT_TAG = "eval.report_sha256"
EVAL_REPORT_PATH = "eval/report.json"
CODE_TAG = "postgame.code_version"
CONFIG_TAG = "postgame.config_sha256"


# --- hashes --------------------------------------------------------------------------------------------------------


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_sha256(folder: str | Path) -> str:
    """The sha256 of a folder's files: each relative path and the sha256 of its bytes, in sorted order."""
    root = Path(folder)
    lines = [f"{p.relative_to(root).as_posix()}\0{file_sha256(p)}\n" for p in sorted(root.rglob("*")) if p.is_file()]
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def config_sha256(cfg: Config) -> str:
    """What the recipe was, not where it ran: the config without `home`, `stack`, `store`, `tracking` and the
    deployment runner's port (`operate.runner_port`)."""
    where: dict[str, Any] = {"home": True, "stack": True, "store": True, "tracking": True, "operate": {"runner_port"}}
    body = cfg.model_dump_json(exclude=where, by_alias=True)
    return hashlib.sha256(body.encode()).hexdigest()


def code_version() -> str:
    """`postgame <version>+git.<commit>` in a checkout, else the package version."""
    from postgame.ingest.snapshot import code_version as version

    return version()


# --- the chain -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hop:
    kind: str  # model_version | eval_report | training_run | dataset | snapshot | log_object
    name: str
    uri: str
    recorded: str | None  # the hash (or ETag) recorded for it
    ok: bool
    detail: str  # what was checked, or why the link is broken
    code_version: str | None = None
    config_sha256: str | None = None
    superseded_by: str | None = None  # a snapshot replaced by its re-redacted successor


@dataclass(frozen=True)
class Lineage:
    model: str
    version: str
    hops: tuple[Hop, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return bool(self.hops) and all(h.ok for h in self.hops)

    @property
    def broken(self) -> list[Hop]:
        return [h for h in self.hops if not h.ok]

    def log_objects(self) -> list[Hop]:
        return [h for h in self.hops if h.kind == "log_object"]

    def to_dict(self) -> dict:
        return {"model": self.model, "version": self.version, "ok": self.ok, "hops": [asdict(h) for h in self.hops]}

    def rows(self) -> list[dict]:
        """One row per hop, for a table (the Prefect artifact)."""
        return [
            {
                "step": h.kind,
                "name": h.name,
                "uri": h.uri,
                "hash": h.recorded or "-",
                "ok": "yes" if h.ok else "BROKEN",
                "code": h.code_version or "-",
                "config": (h.config_sha256 or "-")[:12],
                "checked": h.detail,
            }
            for h in self.hops
        ]

    def text(self) -> str:
        lines = [
            f"{self.model} v{self.version}: {'every hop resolves' if self.ok else 'BROKEN LINKS'} "
            f"({len(self.hops)} hops, {len(self.log_objects())} log objects)"
        ]
        for h in self.hops:
            indent = "      " if h.kind == "log_object" else "  "
            mark = "ok" if h.ok else "BROKEN"
            pins = f" {h.recorded[:16]}" if h.recorded else ""
            where = (
                f" [code {h.code_version}, config {h.config_sha256[:12]}]"
                if h.code_version and h.config_sha256
                else (f" [code {h.code_version}]" if h.code_version else "")
            )
            lines.append(f"{indent}{mark:6s} {h.kind:12s} {h.name}{pins}{where}")
            lines.append(f"{indent}       {h.uri} - {h.detail}")
        return "\n".join(lines)


def _client(cfg: Config):
    from mlflow import MlflowClient

    from postgame.runtime import resolve

    uri = resolve(cfg).tracking_uri
    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def find_version(cfg: Config, version: str):
    """The registered model version: a number, or an alias (`champion`, `challenger`)."""
    from mlflow.exceptions import MlflowException

    from postgame.errors import PostgameError

    client, name = _client(cfg), cfg.tracking.registered_model
    try:
        if version.isdigit():
            return client.get_model_version(name, version)
        return client.get_model_version_by_alias(name, version)
    except MlflowException as exc:
        raise PostgameError(
            f"no version {version!r} of model {name!r} in {_client(cfg).tracking_uri}: {str(exc).splitlines()[0]}"
        ) from None


def follow(cfg: Config, version: str) -> Lineage:
    """The chain of `version` back to its log objects, each hop checked against what it holds now."""
    mv = find_version(cfg, version)
    run = _client(cfg).get_run(mv.run_id)
    tags, params = dict(run.data.tags), dict(run.data.params)
    code, conf = tags.get(CODE_TAG), tags.get(CONFIG_TAG)
    hops = [
        _model_hop(cfg, mv, tags, code, conf),
        _eval_hop(mv.run_id, tags, code, conf),
        _run_hop(mv, run, params, code, conf),
    ]
    dataset_sha = (mv.tags or {}).get("lineage.dataset_sha256") or params.get("dataset_sha256", "")
    dataset_hop, snapshot_ids = _dataset_hop(cfg, dataset_sha, (mv.tags or {}).get("lineage.snapshot_ids", ""))
    hops.append(dataset_hop)
    for snapshot_id in snapshot_ids:
        hops += _snapshot_hops(cfg, snapshot_id)
    return Lineage(model=mv.name, version=str(mv.version), hops=tuple(hops))


def _model_hop(cfg: Config, mv, tags: dict, code, conf) -> Hop:
    import mlflow.artifacts

    uri = f"models:/{mv.name}/{mv.version}"
    recorded = tags.get(CHECKPOINT_TAG)
    with tempfile.TemporaryDirectory(prefix="lineage-", dir=_tmp(cfg)) as tmp:
        try:
            mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=tmp)
        except Exception as exc:  # noqa: BLE001 - any failure to fetch is a broken link, reported as such
            return Hop("model_version", f"v{mv.version}", uri, recorded, False, f"cannot download: {exc}", code, conf)
        found = sorted(p.parent for p in Path(tmp).rglob("config.json"))
        if not found:
            return Hop(
                "model_version", f"v{mv.version}", uri, recorded, False, "no checkpoint (config.json) in it", code, conf
            )
        actual = tree_sha256(found[0])
    if recorded is None:
        return Hop(
            "model_version",
            f"v{mv.version}",
            uri,
            actual,
            False,
            f"no {CHECKPOINT_TAG} tag on run {mv.run_id}: the checkpoint is not pinned",
            code,
            conf,
        )
    ok = actual == recorded
    return Hop(
        "model_version",
        f"v{mv.version}",
        uri,
        recorded,
        ok,
        "checkpoint files match their sha256" if ok else f"checkpoint files hash to {actual}",
        code,
        conf,
    )


def _eval_hop(run_id: str, tags: dict, code, conf) -> Hop:
    import mlflow.artifacts

    uri = f"runs:/{run_id}/{EVAL_REPORT_PATH}"
    recorded = tags.get(EVAL_REPORT_TAG)
    with tempfile.TemporaryDirectory(prefix="lineage-") as tmp:
        try:
            path = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=EVAL_REPORT_PATH, dst_path=tmp)
        except Exception as exc:  # noqa: BLE001 - any failure to fetch is a broken link
            return Hop("eval_report", "report.json", uri, recorded, False, f"cannot download: {exc}", code, conf)
        actual = file_sha256(path)
        resolved = len(json.loads(Path(path).read_text()).get("resolved_ids", []))
    if recorded is None:
        return Hop(
            "eval_report", "report.json", uri, actual, False, f"no {EVAL_REPORT_TAG} tag: not pinned", code, conf
        )
    ok = actual == recorded
    return Hop(
        "eval_report",
        "report.json",
        uri,
        recorded,
        ok,
        f"sha256 matches; {resolved} resolved" if ok else f"report hashes to {actual}",
        code,
        conf,
    )


def _run_hop(mv, run, params: dict, code, conf) -> Hop:
    tagged = (mv.tags or {}).get("lineage.dataset_sha256")
    logged = params.get("dataset_sha256")
    ok = bool(logged) and (tagged is None or tagged == logged)
    parent = params.get("parent_version", "?")
    parent = "the base policy" if parent == "base" else f"v{parent}"
    detail = (
        f"{params.get('method', '?')} from {parent}, trained on dataset {(logged or '?')[:12]}"
        if ok
        else f"run's dataset_sha256 {logged!r} != version tag lineage.dataset_sha256 {tagged!r}"
    )
    return Hop(
        "training_run",
        run.info.run_name or run.info.run_id,
        f"runs:/{run.info.run_id}",
        (mv.tags or {}).get("lineage.run_id") or run.info.run_id,
        ok,
        detail,
        code,
        conf,
    )


def _dataset_hop(cfg: Config, sha: str, tagged_snapshots: str) -> tuple[Hop, list[str]]:
    from postgame.runtime import store
    from postgame.store import sha256_bytes

    s = store(cfg)
    key = f"datasets/{sha}.jsonl"
    uri = s.url(key)
    wanted = [i for i in tagged_snapshots.split(",") if i]
    if not sha or not s.exists(key):
        return Hop(
            "dataset", f"curated-{sha[:12]}", uri, sha or None, False, "the dataset object does not exist"
        ), wanted
    actual = sha256_bytes(s.get(key))
    manifest_key = f"datasets/{sha}.manifest.json"
    manifest = json.loads(s.get(manifest_key)) if s.exists(manifest_key) else {}
    snapshot_ids = list(manifest.get("snapshot_ids") or wanted)
    problems = []
    if actual != sha:
        problems.append(f"content hashes to {actual}")
    if wanted and snapshot_ids != wanted:
        problems.append(f"manifest snapshots {snapshot_ids} != version tag {wanted}")
    detail = (
        "; ".join(problems)
        or f"sha256 matches; {manifest.get('prompts', '?')} prompts, {manifest.get('sft_examples', '?')} SFT examples"
    )
    return Hop(
        "dataset",
        f"curated-{sha[:12]}",
        uri,
        sha,
        not problems,
        detail,
        manifest.get("code_version"),
        manifest.get("config_sha256"),
    ), snapshot_ids


def _snapshot_hops(cfg: Config, snapshot_id: str) -> list[Hop]:
    from postgame import ledger
    from postgame.errors import PostgameError
    from postgame.ingest import snapshot_manifest, supersession
    from postgame.ingest.snapshot import snapshot_id_of, snapshot_prefix
    from postgame.runtime import store
    from postgame.store import sha256_bytes, split_uri

    s = store(cfg)
    uri = s.url(f"{snapshot_prefix(cfg.ingest.state_prefix, snapshot_id)}manifest.json")
    replaced = supersession(snapshot_id, cfg=cfg)
    if replaced is not None:  # its data is gone on purpose: the successor stands for it
        detail = (
            f"superseded by {replaced.superseded_by} (redacted on {replaced.date}): {replaced.records} records "
            f"re-redacted ({', '.join(replaced.kinds)}); the snapshot trained on was deleted"
        )
        hop = Hop("snapshot", snapshot_id[:12], uri, snapshot_id, True, detail, superseded_by=replaced.superseded_by)
        return [hop, *_snapshot_hops(cfg, replaced.superseded_by)]
    try:
        m = snapshot_manifest(snapshot_id, cfg=cfg)
    except PostgameError as exc:
        return [Hop("snapshot", snapshot_id[:12], uri, snapshot_id, False, str(exc))]
    problems = []
    files = {"data": m.data, "quarantine": m.quarantine}
    if snapshot_id_of(files, m.sources, m.corrupt_objects, m.parent, m.schema_version) != snapshot_id:
        problems.append("manifest content does not hash to the snapshot id")
    if not s.exists(m.data.key) or sha256_bytes(s.get(m.data.key)) != m.data.sha256:
        problems.append(f"{m.data.key} is missing or does not match its sha256")
    status = ledger.status(cfg, snapshot_id)
    if status != "trained":
        problems.append(f"ledger says {status!r}, not 'trained' (validated and consumed by a cycle)")
    detail = "; ".join(problems) or (
        f"id = sha256 of its content; data sha256 matches; validated, ledger 'trained'; "
        f"{m.counts.records_ingested} records from {len(m.sources)} objects"
    )
    hops = [
        Hop("snapshot", snapshot_id[:12], uri, m.data.sha256, not problems, detail, m.code_version, m.config_sha256)
    ]
    root, _ = split_uri(m.source_uri)
    source = store(cfg, root)
    for obj in m.sources:
        now = next((o for o in source.list(obj.key) if o.key == obj.key), None)
        if now is None:
            ok, detail = False, "the object no longer exists"
        elif (now.etag, now.size) != (obj.etag, obj.size):
            ok, detail = False, f"changed since ingest: ETag {now.etag}, {now.size} bytes"
        else:
            ok, detail = True, f"ETag and size ({obj.size} bytes) match; {obj.records} records"
        hops.append(
            Hop(
                "log_object",
                obj.key,
                f"{m.source_uri.rstrip('/')}/{obj.key.removeprefix(_prefix(m))}",
                obj.etag,
                ok,
                detail,
            )
        )
    return hops


def _prefix(manifest) -> str:
    from postgame.store import split_uri

    _, prefix = split_uri(manifest.source_uri)
    return prefix.rstrip("/") + "/" if prefix else ""


def _tmp(cfg: Config) -> Path:
    path = cfg.home / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path
