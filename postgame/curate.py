"""Curate: turn validated snapshots of production sessions into a training set.

Only sessions on tasks of the *train* split are used: a session on an eval or holdout task is counted and left out,
so evaluation never measures what training saw. Each row keeps the prompt the deployed agent was shown (the same
`evals.prompts` rendering that simulation, training and evaluation share), the task id (the RL reward grades
against it) and, for resolved and accepted sessions, the agent's answer as an SFT target.

The dataset is written once, content-addressed: `datasets/<sha256>.jsonl` + `datasets/<sha256>.manifest.json`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from postgame.config import Config
from postgame.errors import DataValidationError
from postgame.store import sha256_bytes

ACCEPTED_FEEDBACK = ("accepted", "edited")


@dataclass(frozen=True)
class CuratedDataset:
    uri: str
    sha256: str
    snapshot_ids: tuple[str, ...]
    prompts: int
    sft_examples: int
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"datasets/{self.sha256}.jsonl"


def _last(messages: list[dict], role: str) -> str | None:
    for message in reversed(messages):
        if message.get("role") == role:
            return message.get("content")
    return None


def build_rows(sessions: list[dict], splits: dict[str, str], max_examples: int) -> tuple[list[dict], dict[str, int]]:
    """Pure: sessions (schema-v1 records) + {instance_id: split} → training rows and the skip counts."""
    skipped = {"not_train_split": 0, "unknown_task": 0, "no_prompt": 0}
    by_instance: dict[str, dict] = {}
    for session in sorted(sessions, key=lambda s: (str(s.get("timestamp")), str(s.get("session_id")))):
        task_info = session.get("task") or {}
        instance_id = str(task_info.get("instance_id") or "")
        split = splits.get(instance_id)
        if split is None:
            skipped["unknown_task"] += 1
            continue
        if split != "train":
            skipped["not_train_split"] += 1
            continue
        messages = session.get("messages") or []
        prompt = _last(messages, "user")
        if not prompt:
            skipped["no_prompt"] += 1
            continue
        row = by_instance.setdefault(instance_id, {"instance_id": instance_id, "prompt": prompt, "sessions": []})
        row["sessions"].append(session.get("session_id"))
        outcome = session.get("outcome") or {}
        answer = _last(messages, "assistant") or session.get("patch")
        if outcome.get("status") == "resolved" and outcome.get("feedback") in ACCEPTED_FEEDBACK and answer:
            row.setdefault("completion", answer)
    rows = [by_instance[k] for k in sorted(by_instance)][:max_examples]
    return rows, skipped


def curate_snapshots(cfg: Config, snapshot_ids: list[str], splits: dict[str, str]) -> CuratedDataset:
    """The training set of these snapshots; `splits` maps each task's instance id to its split."""
    from postgame.contract.arrow import to_record
    from postgame.ingest import load_snapshot
    from postgame.lineage import code_version, config_sha256
    from postgame.runtime import store

    sessions: list[dict] = []
    for snapshot_id in snapshot_ids:
        sessions += [to_record(row) for row in load_snapshot(snapshot_id, cfg=cfg).to_pylist()]
    rows, skipped = build_rows(sessions, splits, cfg.curate.max_examples)
    if len(rows) < cfg.curate.min_records:
        raise DataValidationError(
            f"curate: {len(rows)} training prompts from snapshots {[s[:12] for s in snapshot_ids]} < "
            f"curate.min_records={cfg.curate.min_records} (skipped: {skipped})", failed=["curate.min_records"])
    body = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()
    sha = sha256_bytes(body)
    s = store(cfg)
    dataset = CuratedDataset(uri=s.url(f"datasets/{sha}.jsonl"), sha256=sha, snapshot_ids=tuple(snapshot_ids),
                             prompts=len(rows), sft_examples=sum(1 for r in rows if "completion" in r),
                             skipped=skipped)
    if not s.exists(dataset.key):
        s.put(dataset.key, body)
        made_by = {"code_version": code_version(), "config_sha256": config_sha256(cfg)}  # lineage: what made it
        s.put(f"datasets/{sha}.manifest.json", json.dumps({**asdict(dataset), **made_by}, indent=2,
                                                          sort_keys=True).encode())
    return dataset


def load_rows(cfg: Config, dataset: CuratedDataset) -> list[dict]:
    from postgame.runtime import store

    body = store(cfg).get(dataset.key)
    if sha256_bytes(body) != dataset.sha256:
        raise DataValidationError(f"dataset {dataset.uri} does not match its sha256 {dataset.sha256}")
    return [json.loads(line) for line in body.decode().splitlines() if line]

