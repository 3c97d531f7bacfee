"""Curate: turn validated snapshots of production sessions into the rows of each training mode.

Only sessions on tasks of the *train* split are used: a session on an eval or holdout task is counted and left out,
so evaluation never measures what training saw. Every row keeps the prompt the deployed agent was shown (the same
`evals.prompts` rendering that simulation, training and evaluation share) and the task id (the RL reward grades
against it). The harness is the filter; per train instance, from its sessions in time order:

- `sft`  one row per distinct *verified* answer: a session that resolved the task, broke no passing test, whose
         patch the user accepted (or edited) and, for a trajectory, none of whose tool calls is malformed (arguments
         that are not JSON: the model's mistake, kept in the log, never imitated; those it kept out are counted as
         `sft_malformed_calls`) — `prompt`, `completion`; for a schema-v2 session (a tool-using trajectory) also
         `messages`, its whole conversation as logged (OpenAI chat-completions messages: `tool_calls`,
         `tool_call_id` and null contents intact), for a trainer that learns from the trajectory (assistant-only
         loss).
- `dpo`  pairs from the same task: a verified answer (`chosen`) against an answer that failed (unresolved or
         abandoned) or that the user rejected (`rejected`); at most `curate.max_pairs_per_task` per task, those
         whose rejected side broke a passing test first (`outcome.tests_broken` > 0, where the log says). When both
         sessions are schema-v2 trajectories, also `chosen_messages` / `rejected_messages` (each whole conversation):
         trajectory DPO for an agent.
- `grpo` one row per task: `prompt` with its traffic outcomes (`sessions`, `resolved`, `variance` = p(1-p) of the
         resolved share; sessions with an infrastructure `error` are not outcomes). Ordered by how likely sampled
         outcomes are to differ (`order_prompts`: that share shrunk toward the traffic's own rate), highest first:
         GRPO learns only where they differ, and traffic says where that is likely.

Each row has a stable `example_id` (`sft:<instance>:<session>`, ...): the trainer records which ids each step
consumed, so a resumed run can be checked against an uninterrupted one. The dataset is written once,
content-addressed: `datasets/<sha256>.jsonl` (one JSON row per line, with its `kind`) + `datasets/<sha256>.manifest.json`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace

from postgame.config import Config
from postgame.contract.trajectory import malformed_calls
from postgame.errors import DataValidationError
from postgame.store import sha256_bytes

ACCEPTED_FEEDBACK = ("accepted", "edited")
FAILED_STATUSES = ("unresolved", "abandoned")  # the policy's failures; "error" is the infrastructure's
OUTCOME_STATUSES = ("resolved", *FAILED_STATUSES)


KINDS = ("sft", "dpo", "grpo")
PRIOR_SESSIONS = 2.0  # pseudo-sessions at the traffic's own resolve rate, by which each task's share is shrunk


@dataclass(frozen=True)
class CuratedDataset:
    uri: str
    sha256: str
    snapshot_ids: tuple[str, ...]
    prompts: int  # train instances with a prompt (= grpo rows)
    sft_examples: int  # verified completions
    dpo_pairs: int = 0
    varied_prompts: int = 0  # grpo prompts whose traffic outcomes differ
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"datasets/{self.sha256}.jsonl"

    def count(self, kind: str) -> int:
        return {"sft": self.sft_examples, "dpo": self.dpo_pairs, "grpo": self.prompts}[kind]


def _last(messages: list[dict], role: str) -> str | None:
    for message in reversed(messages):
        if message.get("role") == role:
            return message.get("content")
    return None


@dataclass
class _Attempt:
    session_id: str
    prompt: str
    answer: str
    status: str
    feedback: str
    messages: list[dict] | None = None  # a schema-v2 trajectory, as logged
    broken: int = 0  # passing tests its patch broke (`outcome.tests_broken`; 0 where the log does not say)
    malformed: int = 0  # tool calls whose arguments are not JSON (`postgame.contract.trajectory.malformed_calls`)

    @property
    def verified(self) -> bool:
        return (
            self.status == "resolved"
            and self.feedback in ACCEPTED_FEEDBACK
            and bool(self.answer)
            and not self.broken
            and not self.malformed
        )

    @property
    def failed(self) -> bool:
        return (
            self.status in FAILED_STATUSES
            or (self.status == "resolved" and self.feedback == "rejected")
            or (self.status == "resolved" and bool(self.broken))
        )


def _attempts(sessions: list[dict], splits: dict[str, str]) -> tuple[dict[str, list[_Attempt]], dict[str, int]]:
    skipped = {"not_train_split": 0, "unknown_task": 0, "no_prompt": 0}
    by_instance: dict[str, list[_Attempt]] = {}
    for session in sorted(sessions, key=lambda s: (str(s.get("timestamp")), str(s.get("session_id")))):
        instance_id = str((session.get("task") or {}).get("instance_id") or "")
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
        outcome = session.get("outcome") or {}
        trajectory = session.get("schema_version") == 2
        by_instance.setdefault(instance_id, []).append(
            _Attempt(
                session_id=str(session.get("session_id")),
                prompt=prompt,
                answer=_last(messages, "assistant") or session.get("patch") or "",
                status=str(outcome.get("status") or ""),
                feedback=str(outcome.get("feedback") or "none"),
                messages=messages if trajectory else None,
                broken=_count(outcome.get("tests_broken")),
                malformed=malformed_calls(messages) if trajectory else 0,
            )
        )
    return by_instance, skipped


def _count(value: object) -> int:
    """A count a log may carry beyond the contract: a non-negative int, else 0 (unknown)."""
    return value if type(value) is int and value > 0 else 0


def build_rows(
    sessions: list[dict], splits: dict[str, str], max_examples: int, max_pairs_per_task: int = 4
) -> tuple[list[dict], dict[str, int]]:
    """Pure: sessions (records of either schema version) + {instance_id: split} → rows of every kind (see the module docstring)
    and the skip counts. Deterministic: the same sessions give the same rows in the same order."""
    by_instance, skipped = _attempts(sessions, splits)
    every = [a for attempts in by_instance.values() for a in attempts]  # verified but for a malformed call:
    skipped["sft_malformed_calls"] = sum(bool(a.malformed) and replace(a, malformed=0).verified for a in every)
    sft: list[dict] = []
    dpo: list[dict] = []
    grpo: list[dict] = []
    for instance_id in sorted(by_instance):
        attempts = by_instance[instance_id]
        prompt = attempts[0].prompt
        good: list[_Attempt] = []
        for a in attempts:  # the first session of each distinct verified answer
            if a.verified and all(a.answer != g.answer for g in good):
                good.append(a)
        bad = [a for a in attempts if a.failed and all(a.answer != g.answer for g in good)]
        bad.sort(key=lambda a: not a.broken)  # stable: those that broke a passing test first, each in time order
        sft += [
            {
                "kind": "sft",
                "example_id": f"sft:{instance_id}:{a.session_id}",
                "instance_id": instance_id,
                "prompt": a.prompt,
                "completion": a.answer,
                **({} if a.messages is None else {"messages": a.messages}),
            }
            for a in good
        ]
        pairs = [(g, b) for g in good for b in bad][:max_pairs_per_task]
        dpo += [
            {
                "kind": "dpo",
                "example_id": f"dpo:{instance_id}:{g.session_id}:{b.session_id}",
                "instance_id": instance_id,
                "prompt": g.prompt,
                "chosen": g.answer,
                "rejected": b.answer or "",
                **(
                    {"chosen_messages": g.messages, "rejected_messages": b.messages}
                    if g.messages is not None and b.messages is not None
                    else {}
                ),
            }
            for g, b in pairs
        ]
        outcomes = [1.0 if a.status == "resolved" else 0.0 for a in attempts if a.status in OUTCOME_STATUSES]
        p = sum(outcomes) / len(outcomes) if outcomes else 0.0
        grpo.append(
            {
                "kind": "grpo",
                "example_id": f"grpo:{instance_id}",
                "instance_id": instance_id,
                "prompt": prompt,
                "sessions": len(outcomes),
                "resolved": int(sum(outcomes)),
                "variance": p * (1 - p),
                "session_ids": [a.session_id for a in attempts],
            }
        )
    return sft[:max_examples] + dpo[:max_examples] + order_prompts(grpo)[:max_examples], skipped


def order_prompts(grpo: list[dict], prior_sessions: float = PRIOR_SESSIONS) -> list[dict]:
    """GRPO rows, those likeliest to vary when sampled first: by the variance p(1-p) of each task's resolved share
    shrunk toward the traffic's own rate (p = (resolved + k·m) / (sessions + k), m the share of all outcomes that
    resolved, k = `prior_sessions`), then by a stable hash of the task id, so that ties spread over the projects
    instead of taking the alphabet's first. With one session a task (the usual case: a demo's 96 sessions over 210
    tasks) the empirical variance is 0 everywhere; the shrunk one ranks a weak policy's resolved tasks first (it
    solves them sometimes) and a strong policy's failed ones (it fails them sometimes)."""
    sessions = sum(r["sessions"] for r in grpo)
    m = sum(r["resolved"] for r in grpo) / sessions if sessions else 0.5

    def expected(r: dict) -> float:
        p = (r["resolved"] + prior_sessions * m) / (r["sessions"] + prior_sessions)
        return p * (1 - p)

    return sorted(grpo, key=lambda r: (-expected(r), sha256_bytes(r["instance_id"].encode()), r["instance_id"]))


def rows_of(rows: list[dict], kind: str) -> list[dict]:
    """The rows of one training mode, in curated order."""
    if kind not in KINDS:
        raise ValueError(f"unknown row kind {kind!r}; valid: {', '.join(KINDS)}")
    return [r for r in rows if r.get("kind") == kind]


def snapshots_to_learn(cfg: Config, claimed: list[str]) -> list[str]:
    """The snapshots a cycle learns from: the newest `curate.replay_snapshots` that earlier cycles trained on, then
    the ones it claimed."""
    from postgame import ledger

    return [s for s in ledger.recently_trained(cfg, cfg.curate.replay_snapshots) if s not in claimed] + list(claimed)


def curate_snapshots(cfg: Config, snapshot_ids: list[str], splits: dict[str, str]) -> CuratedDataset:
    """The training set of these snapshots; `splits` maps each task's instance id to its split."""
    from postgame.contract.arrow import to_record
    from postgame.ingest import load_snapshot
    from postgame.lineage import code_version, config_sha256
    from postgame.runtime import store

    sessions: list[dict] = []
    for snapshot_id in snapshot_ids:
        sessions += [to_record(row) for row in load_snapshot(snapshot_id, cfg=cfg).to_pylist()]
    rows, skipped = build_rows(sessions, splits, cfg.curate.max_examples, cfg.curate.max_pairs_per_task)
    grpo = rows_of(rows, "grpo")
    if len(grpo) < cfg.curate.min_records:
        raise DataValidationError(
            f"curate: {len(grpo)} training prompts from snapshots {[s[:12] for s in snapshot_ids]} < "
            f"curate.min_records={cfg.curate.min_records} (skipped: {skipped})",
            failed=["curate.min_records"],
        )
    body = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()
    sha = sha256_bytes(body)
    s = store(cfg)
    dataset = CuratedDataset(
        uri=s.url(f"datasets/{sha}.jsonl"),
        sha256=sha,
        snapshot_ids=tuple(snapshot_ids),
        prompts=len(grpo),
        sft_examples=len(rows_of(rows, "sft")),
        dpo_pairs=len(rows_of(rows, "dpo")),
        varied_prompts=sum(1 for r in grpo if r["variance"] > 0),
        skipped=skipped,
    )
    if not s.exists(dataset.key):
        s.put(dataset.key, body)
        made_by = {"code_version": code_version(), "config_sha256": config_sha256(cfg)}  # lineage: what made it
        s.put(
            f"datasets/{sha}.manifest.json",
            json.dumps({**asdict(dataset), **made_by}, indent=2, sort_keys=True).encode(),
        )
    return dataset


def load_rows(cfg: Config, dataset: CuratedDataset) -> list[dict]:
    """Every row of the dataset (all kinds), checked against its sha256."""
    from postgame.runtime import store

    body = store(cfg).get(dataset.key)
    if sha256_bytes(body) != dataset.sha256:
        raise DataValidationError(f"dataset {dataset.uri} does not match its sha256 {dataset.sha256}")
    return [json.loads(line) for line in body.decode().splitlines() if line]
