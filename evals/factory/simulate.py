"""The traffic simulator: the deployed agent attempts train tasks, the harness grades them, and each attempt becomes
a schema-v1 production log record in the log store — the production traffic of the embedded default.

    postgame simulate --sessions 200 [--seed N] [--duplicate-rate 0.05 --malformed-rate 0.02 --secret-rate 0.1] [--json]

`simulate()` is the pure core: it takes the tasks, an `attempt` callable ((prompts, their tasks) -> generations with `text`,
`prompt_tokens`, `completion_tokens`, `latency_ms`; the CLI passes the MLflow `champion`) and a `grade` callable
(instance, patch -> a GradeResult; the CLI passes `evals.harness.evaluate`), and writes
`<log_prefix>/dt=YYYY-MM-DD/part-NNNN.jsonl.gz` objects (NNNN = the next free number of that day).

Realistic dirt, each knob a rate, each defect counted exactly in the returned summary so that an ingest round trip
can be checked to the record:
- duplicates: a session's line re-sent byte for byte (ingest keeps one);
- malformed lines: extra lines that ingest must quarantine, half `parse` (truncated JSON, a JSON array, invalid
  UTF-8) and half `schema` (a required field missing, an unknown status, a negative token count, messages not a list);
- secrets: a realistic fake secret (AWS key, GitHub token, private key, bearer token, password in a URL, e-mail)
  leaked into a tool message; ingest must redact it. Which session holds which kind is recorded.

Each graded session's outcome also says how many passing tests its patch broke, `tests_broken` (the harness's
PASS_TO_PASS failures): a field beyond the contract, kept by ingest like any unknown field, that curate reads when a
log has it (a DPO pair then prefers a rejected side that broke a test).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import string
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from evals.factory.instances import prompt_files
from evals.harness.constants import PASS_TO_PASS
from evals.harness.instance import Instance
from evals.prompts import SYSTEM_PROMPT, PromptContext, extract_patch, render_prompt
from postgame.settings.factory import SimulatorSettings
from postgame.store import ObjectStore

PARSE_DEFECTS = ("truncated_json", "json_array", "invalid_utf8")
SCHEMA_DEFECTS = ("missing_outcome", "unknown_status", "negative_tokens", "messages_not_a_list")
SECRET_KINDS = ("aws_key", "github_token", "private_key", "bearer_token", "url_password", "email")


class GenerationLike(Protocol):
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float


Attempt = Callable[[list[str], list[Instance]], Sequence[GenerationLike]]  # (prompts, their tasks)
Grade = Callable[[Instance, str], Any]  # -> GradeResult (status, tests_status)


@dataclass
class SimulationSummary:
    """What was written, with every planted defect counted (what an ingest of these objects must report)."""

    sessions: int  # distinct valid records (unique session ids)
    lines: int  # every line written: sessions + duplicates + malformed
    duplicates: int
    malformed: dict[str, int]  # by the quarantine reason ingest must give: parse / schema
    malformed_kinds: dict[str, int]  # by defect
    secrets: dict[str, int]  # by kind
    secret_sessions: dict[str, str]  # session_id -> kind planted in its tool message
    outcomes: dict[str, int]  # resolved / unresolved / error / abandoned
    objects: list[str]  # store keys written
    model_name: str
    model_version: str
    seconds: float = 0.0
    session_ids: list[str] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "session_ids"}

    def summary(self) -> str:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        dirt = (
            f"{self.duplicates} duplicates, {sum(self.malformed.values())} malformed "
            f"(parse {self.malformed['parse']}, schema {self.malformed['schema']}), {len(self.secret_sessions)} with secrets"
        )
        return (
            f"{self.sessions} sessions by {self.model_name}@{self.model_version} ({outcomes}); {dirt}; "
            f"{len(self.objects)} objects in {self.seconds:.0f}s"
        )


# ---------------------------------------------------------------------------------------------------------------------
# Fake secrets: shaped like the real thing, valid for nothing.


def fake_secret(kind: str, rng: random.Random) -> str:
    """A line a careless tool output could contain, carrying one secret of `kind`."""
    upper = string.ascii_uppercase + "234567"
    alnum = string.ascii_letters + string.digits
    pick = lambda chars, n: "".join(rng.choice(chars) for _ in range(n))  # noqa: E731
    if kind == "aws_key":
        return f"export AWS_ACCESS_KEY_ID=AKIA{pick(upper, 16)}"
    if kind == "github_token":
        return f"export GITHUB_TOKEN=ghp_{pick(alnum, 36)}"
    if kind == "private_key":
        body = "\n".join(pick(alnum + "+/", 64) for _ in range(4))
        return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    if kind == "bearer_token":
        return f"curl -H 'Authorization: Bearer {pick(alnum, 40)}' https://api.internal.invalid/v1/jobs"
    if kind == "url_password":
        return f"DATABASE_URL=postgres://deploy:{pick(alnum, 14)}@db.internal.invalid:5432/app"
    if kind == "email":
        return f"Author: {pick(string.ascii_lowercase, 7)}.{pick(string.ascii_lowercase, 5)}@acme-corp.com"
    raise KeyError(f"unknown secret kind {kind!r}; valid: {', '.join(SECRET_KINDS)}")


# ---------------------------------------------------------------------------------------------------------------------
# Malformed lines


def malformed_line(record: dict, defect: str) -> bytes:
    """A line that breaks the contract in one named way (`PARSE_DEFECTS` or `SCHEMA_DEFECTS`)."""
    rec = json.loads(json.dumps(record))
    line = json.dumps(rec, ensure_ascii=False)
    if defect == "truncated_json":
        return line[: max(10, len(line) // 2)].encode()
    if defect == "json_array":
        return json.dumps([rec["session_id"], rec["timestamp"]]).encode()
    if defect == "invalid_utf8":
        data = line.encode()
        cut = data.index(b'"session_id"')
        return data[:cut] + b'"note": "\xff\xfe", ' + data[cut:]
    if defect == "missing_outcome":
        del rec["outcome"]
    elif defect == "unknown_status":
        rec["outcome"]["status"] = "exploded"
    elif defect == "negative_tokens":
        rec["usage"]["completion_tokens"] = -7
    elif defect == "messages_not_a_list":
        rec["messages"] = "see attachment"
    else:
        raise KeyError(f"unknown defect {defect!r}; valid: {', '.join(PARSE_DEFECTS + SCHEMA_DEFECTS)}")
    return json.dumps(rec, ensure_ascii=False).encode()


# ---------------------------------------------------------------------------------------------------------------------
# Sessions


def _tool_report(grade: Any | None) -> tuple[str, int, int]:
    if grade is None:
        return "No edit blocks or diff found in the answer: nothing was applied or run.", 0, 0
    tests = getattr(grade, "tests_status", {}) or {}
    passed = sum(len(v.get("success", [])) for v in tests.values())
    failed_ids = [t for v in tests.values() for t in v.get("failure", [])]
    if grade.status == "error":
        return f"The test run could not start: {getattr(grade, 'error', '') or 'infrastructure error'}", 0, 0
    if not getattr(grade, "patch_applied", True):
        return f"The patch did not apply: {getattr(grade, 'apply_error', '') or 'no match'}", 0, 0
    lines = [f"Ran the tests: {passed} passed, {len(failed_ids)} failed."]
    lines += [f"FAILED {t}" for t in failed_ids[:5]]
    return "\n".join(lines), passed, len(failed_ids)


def _feedback(status: str, rng: random.Random) -> str:
    if status == "resolved":
        return "accepted" if rng.random() < 0.8 else "edited"
    if status == "unresolved":
        return "rejected" if rng.random() < 0.6 else "none"
    return "none"


@dataclass
class _Session:
    """What one session logs, however the policy acted (one answer, or an agent's episode)."""

    schema_version: int
    messages: list[dict]
    patch: str
    status: str
    passed: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    broken: int | None = None  # PASS_TO_PASS tests the patch broke, when it was graded


def _broken(grade: Any | None) -> int | None:
    """How many PASS_TO_PASS tests a graded patch broke: None when nothing was graded or the grading itself failed
    (an infrastructure error says nothing of the patch), 0 when the patch did not apply (nothing changed), as
    `evals.agent.env.EpisodeResult.p2p_broken` counts an episode's."""
    if grade is None or grade.status == "error":
        return None
    if not getattr(grade, "patch_applied", True):
        return 0
    return len((getattr(grade, "tests_status", None) or {}).get(PASS_TO_PASS, {}).get("failure", []))


def _answer_sessions(
    prompts: list[str], generations: Sequence[GenerationLike], patches: list[str], grades: list[Any]
) -> list[_Session]:
    out = []
    for prompt, gen, patch, result in zip(prompts, generations, patches, grades):
        report, passed, failed = _tool_report(result)
        status = "abandoned" if result is None else result.status
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": gen.text},
            {"role": "tool", "name": "run_tests", "content": report},
        ]
        out.append(
            _Session(
                1,
                messages,
                patch,
                status,
                passed,
                failed,
                int(gen.prompt_tokens),
                int(gen.completion_tokens),
                float(gen.latency_ms),
                _broken(result),
            )
        )
    return out


def episode_session(record: dict) -> _Session:
    """An agent episode's trajectory record (`evals.agent`) as a schema-v2 session: every message, tool call and tool
    result; the status from the grade of what it submitted (an episode that submitted nothing is `abandoned`)."""
    report = record.get("harness_report") or {}
    tests = report.get("tests_status") or {}
    passed = sum(len(v.get("success", [])) for v in tests.values())
    failed = sum(len(v.get("failure", [])) for v in tests.values())
    if record["outcome"] == "infra_error":
        status = "error"
    elif record["outcome"] != "submitted" or not record.get("patch"):
        status = "abandoned"
    else:
        status = "resolved" if record["resolved"] else "unresolved"
    return _Session(
        2,
        record["messages"],
        record.get("patch") or "",
        status,
        passed,
        failed,
        int(record["prompt_tokens"]),
        int(record["completion_tokens"]),
        float(record["seconds"]) * 1000,
        None if status == "error" else record.get("p2p_broken"),
    )


def _plant(messages: list[dict], secret: str) -> list[dict]:
    """The messages with `secret` added to the last tool result (a careless tool output)."""
    out = [dict(m) for m in messages]
    for m in reversed(out):
        if m.get("role") == "tool":
            m["content"] = (m.get("content") or "") + "\n" + secret
            return out
    return out + [{"role": "tool", "name": "run_tests", "content": secret}]


class Play(Protocol):
    """Episodes of the tasks (evals.agent): their trajectory records in task order; `progress(instance id, 1)` as each
    one finishes."""

    def __call__(
        self, tasks: list[Instance], prompts: list[str], progress: Callable[[str, int], None] | None = None
    ) -> list[dict]: ...


def simulate(
    tasks: Sequence[Instance],
    attempt: Attempt | None,
    grade: Grade | None,
    *,
    sessions: int,
    store: ObjectStore,
    settings: SimulatorSettings,
    seed: int = 0,
    model_name: str = "",
    model_version: str = "",
    now: datetime | None = None,
    usd_per_cpu_hour: float = 0.0,
    grade_workers: int = 1,
    files_for: Callable[[Instance], dict[str, str]] = prompt_files,
    prompt_context: PromptContext = "file",
    play: Play | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> SimulationSummary:
    """Run `sessions` simulated sessions on `tasks` and write them to `store` (see the module docstring). With
    `play`, the policy acts as an agent: each session is an episode in the environment, logged as schema v2.
    `progress(text, n)` (a progress bar's `tell`) is told which sessions the policy answers (or plays) now, then
    `n` more answered: `sessions` in all; then that the answers are graded."""
    tell = progress or (lambda text, done: None)
    if not tasks:
        raise ValueError("no tasks to simulate: the train split is empty (run `postgame factory build`)")
    start = time.monotonic()
    now = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    rng = random.Random(f"simulate:{seed}:{now.isoformat()}")
    run_tag = hashlib.sha256(f"{seed}:{now.isoformat()}:{model_name}:{model_version}".encode()).hexdigest()[:10]
    first = now.replace(hour=0, minute=0, second=0) - timedelta(days=settings.days - 1)
    span = (now - first).total_seconds()
    chosen = [tasks[rng.randrange(len(tasks))] for _ in range(sessions)]
    stamps = sorted(first + timedelta(seconds=int(rng.uniform(0, span))) for _ in range(sessions))

    # 1. the policy answers, a batch at a time (or plays every episode); 2. the harness grades what it answered.
    prompts = [render_prompt(inst, files_for(inst), context=prompt_context) for inst in chosen]
    if play is not None:  # all at once: one pool of workers, none idle at a batch's end waiting for its last episode
        done = 0

        def played_one(_instance_id: str, n: int) -> None:
            nonlocal done
            done += n
            tell(f"{done} played", n)

        tell(f"playing sessions 1-{sessions}", 0)
        logged = [episode_session(r) for r in play(list(chosen), prompts, progress=played_one)]
    else:
        assert attempt is not None and grade is not None, "simulate needs attempt and grade, or play"
        generations: list[GenerationLike] = []
        for i in range(0, sessions, settings.batch_size):
            batch = prompts[i : i + settings.batch_size]
            tell(f"answering sessions {i + 1}-{i + len(batch)}", 0)
            out = list(attempt(batch, list(chosen[i : i + len(batch)])))
            if len(out) != len(batch):
                raise ValueError(f"the policy returned {len(out)} generations for {len(batch)} prompts")
            generations += out
            tell(f"{len(generations)} answered", len(out))
        patches = [extract_patch(g.text) for g in generations]
        tell(f"grading the {sum(bool(p.strip()) for p in patches)} answers with a patch", 0)
        with ThreadPoolExecutor(max_workers=max(1, grade_workers)) as pool:
            grades = list(pool.map(lambda ip: grade(*ip) if ip[1].strip() else None, zip(chosen, patches)))
        logged = _answer_sessions(prompts, generations, patches, grades)

    # 3. records, with the dirt planted and counted.
    by_day: dict[str, list[bytes]] = {}
    outcomes: Counter[str] = Counter()
    secret_sessions: dict[str, str] = {}
    kinds: Counter[str] = Counter()
    resend: list[tuple[str, bytes]] = []
    ids = []
    for n, (inst, sess, when) in enumerate(zip(chosen, logged, stamps)):
        session_id = f"sim-{run_tag}-{n:06d}"
        status, messages = sess.status, sess.messages
        if rng.random() < settings.secret_rate:
            kind = SECRET_KINDS[rng.randrange(len(SECRET_KINDS))]
            messages = _plant(messages, fake_secret(kind, rng))
            secret_sessions[session_id] = kind
        cost = (
            sess.latency_ms / 3_600_000 * usd_per_cpu_hour
            + (sess.prompt_tokens + sess.completion_tokens) / 1000 * settings.usd_per_1k_tokens
        )
        record = {
            "schema_version": sess.schema_version,
            "session_id": session_id,
            "timestamp": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "agent": {"model_name": model_name, "model_version": str(model_version)},
            "task": {
                "instance_id": inst.instance_id,
                "repo": inst.repo,
                "problem_statement": inst.problem_statement,
                "environment": getattr(inst, "environment_uri", None) or inst.environment,
            },
            "messages": messages,
            "patch": sess.patch,
            "outcome": {
                "status": status,
                "tests_passed": sess.passed,
                "tests_failed": sess.failed,
                "feedback": _feedback(status, rng),
                **({} if sess.broken is None else {"tests_broken": sess.broken}),
            },
            "usage": {
                "prompt_tokens": sess.prompt_tokens,
                "completion_tokens": sess.completion_tokens,
                "latency_ms": round(sess.latency_ms, 3),
                "cost_usd": round(cost, 8),
            },
        }
        outcomes[status] += 1
        ids.append(session_id)
        line = json.dumps(record, ensure_ascii=False).encode()
        todays = by_day.setdefault(when.strftime("%Y-%m-%d"), [])
        todays.append(line)
        if rng.random() < settings.duplicate_rate:
            resend.append((when.strftime("%Y-%m-%d"), line))
        if rng.random() < settings.malformed_rate:
            pool_ = PARSE_DEFECTS if rng.random() < 0.5 else SCHEMA_DEFECTS
            defect = pool_[rng.randrange(len(pool_))]
            broken = {**record, "session_id": f"{session_id}-malformed"}
            todays.insert(rng.randint(0, len(todays)), malformed_line(broken, defect))
            kinds[defect] += 1

    for day, line in resend:  # a re-send lands anywhere after the original, in the same day's object
        lines = by_day[day]
        lines.insert(rng.randint(lines.index(line) + 1, len(lines)), line)
    duplicates = len(resend)

    objects = []
    for day, lines in sorted(by_day.items()):
        prefix = f"{settings.log_prefix.rstrip('/')}/dt={day}/"
        taken = {info.key for info in store.list(prefix)}
        number = 0
        while f"{prefix}part-{number:04d}.jsonl.gz" in taken:
            number += 1
        key = f"{prefix}part-{number:04d}.jsonl.gz"
        store.put(key, gzip.compress(b"".join(line + b"\n" for line in lines), mtime=0))
        objects.append(key)

    malformed = {"parse": sum(kinds[k] for k in PARSE_DEFECTS), "schema": sum(kinds[k] for k in SCHEMA_DEFECTS)}
    return SimulationSummary(
        sessions=sessions,
        lines=sessions + duplicates + sum(malformed.values()),
        duplicates=duplicates,
        malformed=malformed,
        malformed_kinds=dict(kinds),
        secrets=dict(Counter(secret_sessions.values())),
        secret_sessions=secret_sessions,
        outcomes=dict(outcomes),
        objects=objects,
        model_name=model_name,
        model_version=str(model_version),
        seconds=round(time.monotonic() - start, 3),
        session_ids=ids,
    )
