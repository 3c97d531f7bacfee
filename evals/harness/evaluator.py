"""Grade one (instance, patch): the function the evaluate stage and the RL reward share.

    result = evaluate(instance, patch, repos_dir=REPOS, settings=HarnessSettings(), cache=GradeCache())
    result.status      # "resolved" | "unresolved" | "error"
    result.reward      # 1.0 FULL, 0.0 otherwise (partial credit by settings), None for infrastructure errors

`evaluate` never raises. Whatever the model's code causes (no apply, crash, hang, limit hit, tampering) is
`unresolved` with reward 0.0; only what is not the model's doing is `error` with reward None, and is never cached.
Results are cached by (instance, patch, grading settings) so GRPO's repeated samples are graded once.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.harness import grading
from evals.harness.constants import GradeStatus, Resolution
from evals.harness.instance import Instance
from evals.harness.testrun import TestRun, run_tests
from postgame.settings.harness import HarnessSettings

if TYPE_CHECKING:
    from evals.harness.repoenv import EnvCache

# Settings that cannot change a grade are left out of the cache key.
_KEY_EXCLUDE = {
    "workers",
    "cache_dir",
    "work_dir",
    "keep_workdir",
    "max_log_kb",
    "reruns",
    "env_build_network",
    "env_build_timeout_s",
    "env_store_prefix",
}


@dataclass
class GradeResult:
    instance_id: str
    status: str
    resolution: str
    reward: float | None
    tests_status: dict[str, dict[str, list[str]]]
    patch_exists: bool = True
    patch_applied: bool = False
    apply_error: str | None = None
    error: str | None = None
    timed_out: bool = False
    reverted_files: list[str] = field(default_factory=list)
    tampering: list[str] = field(default_factory=list)
    flaky_tests: list[str] = field(default_factory=list)
    sandbox: str = "none"
    seconds: float = 0.0
    model_name_or_path: str = ""
    cached: bool = False
    log: str = field(default="", repr=False)

    @property
    def resolved(self) -> bool:
        return self.status == GradeStatus.RESOLVED.value

    def to_report(self) -> dict[str, Any]:
        """SWE-bench's per-instance report (first keys) + postgame's fields."""
        report = {
            "patch_is_None": False,
            "patch_exists": self.patch_exists,
            "patch_successfully_applied": self.patch_applied,
            "resolved": self.resolved,
            "tests_status": self.tests_status,
        }
        extra = asdict(self)
        for key in ("log", "tests_status", "instance_id"):
            extra.pop(key)
        return {**report, **extra}

    @classmethod
    def from_report(cls, instance_id: str, report: dict[str, Any]) -> GradeResult:
        names = set(cls.__dataclass_fields__)
        fields = {k: v for k, v in report.items() if k in names}
        fields.update(instance_id=instance_id, patch_applied=report.get("patch_successfully_applied", False))
        return cls(**fields)


class GradeCache:
    """Graded results by (instance, patch, settings): in memory, and on disk under `directory` when given."""

    def __init__(self, directory: str | Path | None = None):
        self.directory = Path(directory) if directory else None
        self._memory: dict[str, GradeResult] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(instance: Instance, patch: str, settings: HarnessSettings, reruns: int = 0) -> str:
        fields = {
            "instance_id",
            "repo",
            "base_commit",
            "test_patch",
            "FAIL_TO_PASS",
            "PASS_TO_PASS",
            "test_cmd",
            "environment",
        }
        ident = instance.model_dump(include=fields | ({"env_spec"} if instance.env_spec is not None else set()))
        payload = json.dumps(
            [ident, patch, settings.model_dump(mode="json", exclude=_KEY_EXCLUDE), reruns], sort_keys=True
        )
        return hashlib.sha256(payload.encode()).hexdigest()

    def _path(self, key: str) -> Path | None:
        return self.directory / key[:2] / f"{key}.json" if self.directory else None

    def get(self, key: str) -> GradeResult | None:
        with self._lock:
            if key in self._memory:
                return self._memory[key]
        path = self._path(key)
        if path is None or not path.exists():
            return None
        try:
            data = json.loads(path.read_text())
            result = GradeResult.from_report(data["instance_id"], data["report"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        with self._lock:
            self._memory[key] = result
        return result

    def put(self, key: str, result: GradeResult) -> None:
        if result.status == GradeStatus.ERROR.value:
            return  # infrastructure errors are retried, never remembered
        with self._lock:
            self._memory[key] = result
        path = self._path(key)
        if path is not None:
            try:  # the disk copy is best effort: a full disk must not turn a grade into a crash
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
                tmp.write_text(json.dumps({"instance_id": result.instance_id, "report": result.to_report()}))
                tmp.replace(path)
            except OSError:
                pass


def _grade(instance: Instance, run: TestRun, settings: HarnessSettings) -> tuple[str, str, float | None, dict]:
    report = grading.tests_report(instance.FAIL_TO_PASS, instance.PASS_TO_PASS, run.statuses)
    if run.infra_error:
        return GradeStatus.ERROR.value, Resolution.NO.value, None, report.to_dict()
    res = grading.resolution(report, timed_out=run.timed_out) if run.patch_applied else Resolution.NO
    status = GradeStatus.RESOLVED if res is Resolution.FULL else GradeStatus.UNRESOLVED
    return (
        status.value,
        res.value,
        grading.reward(res, report, partial_credit=settings.partial_credit),
        report.to_dict(),
    )


def _flaky(runs: list[TestRun]) -> list[str]:
    ok = [r for r in runs if not r.infra_error]
    names = set().union(*(r.statuses for r in ok)) if ok else set()
    return sorted(n for n in names if len({r.statuses.get(n) for r in ok}) > 1)


def evaluate(
    instance: Instance,
    patch: str | None,
    *,
    repos_dir: str | Path | None,
    settings: HarnessSettings,
    cache: GradeCache | None = None,
    reruns: int | None = None,
    model_name_or_path: str = "",
    envs: EnvCache | None = None,
) -> GradeResult:
    """Grade `patch` on `instance` like SWE-bench (see grading.py). Never raises. `envs`: where per-repository
    environments (instances with `env_spec`) are kept; default the process-wide local cache."""
    try:
        return _evaluate(instance, patch or "", repos_dir, settings, cache, reruns, model_name_or_path, envs)
    except Exception as exc:  # noqa: BLE001 - a harness bug is an infrastructure error, never a crash of the batch
        return error_result(instance.instance_id, f"harness error: {type(exc).__name__}: {exc}", model_name_or_path)


def error_result(instance_id: str, reason: str, model_name_or_path: str = "") -> GradeResult:
    empty = grading.tests_report([], [], {}).to_dict()
    return GradeResult(
        instance_id,
        GradeStatus.ERROR.value,
        Resolution.NO.value,
        None,
        empty,
        error=reason,
        model_name_or_path=model_name_or_path,
        log=f"INFRASTRUCTURE ERROR: {reason}",
    )


def _empty_patch(
    instance: Instance, repos_dir: str | Path | None, settings: HarnessSettings, model_name_or_path: str
) -> GradeResult:
    from evals.harness.environment import EnvironmentMissing, resolve_source
    from evals.harness.sandbox import choose_mode

    try:  # a missing repository is an error even when there is nothing to apply
        resolve_source(instance, Path(repos_dir) if repos_dir else None)
    except EnvironmentMissing as exc:
        return error_result(instance.instance_id, str(exc), model_name_or_path)
    report = grading.tests_report(instance.FAIL_TO_PASS, instance.PASS_TO_PASS, {})
    return GradeResult(
        instance.instance_id,
        GradeStatus.UNRESOLVED.value,
        Resolution.NO.value,
        0.0,
        report.to_dict(),
        patch_exists=False,
        apply_error="empty patch",
        sandbox=choose_mode(settings)[0] or "none",
        model_name_or_path=model_name_or_path,
        log="empty patch: graded unresolved without running the tests",
    )


def _evaluate(
    instance: Instance,
    patch: str,
    repos_dir: str | Path | None,
    settings: HarnessSettings,
    cache: GradeCache | None,
    reruns: int | None,
    model_name_or_path: str,
    envs: EnvCache | None = None,
) -> GradeResult:
    reruns = settings.reruns if reruns is None else reruns
    key = GradeCache.key(instance, patch, settings, reruns) if cache is not None else ""
    if cache is not None and (hit := cache.get(key)) is not None:
        return GradeResult(**{**asdict(hit), "cached": True, "model_name_or_path": model_name_or_path})
    if not patch.strip():
        result = _empty_patch(instance, repos_dir, settings, model_name_or_path)
    else:
        runs = [run_tests(instance, patch, repos_dir=repos_dir, settings=settings, envs=envs)]
        first = runs[0]
        if first.patch_applied and not first.infra_error:
            runs += [
                run_tests(instance, patch, repos_dir=repos_dir, settings=settings, envs=envs) for _ in range(reruns)
            ]
        status, res, reward, tests_status = _grade(instance, first, settings)
        log = first.log + "".join(
            f"\n---- rerun {n}: {len(r.statuses)} results, infra error: {r.infra_error}"
            for n, r in enumerate(runs[1:], 1)
        )
        result = GradeResult(
            instance.instance_id,
            status,
            res,
            reward,
            tests_status,
            patch_applied=first.patch_applied,
            apply_error=first.apply_error,
            error=first.infra_error,
            timed_out=first.timed_out,
            reverted_files=first.reverted_files,
            tampering=first.tampering,
            flaky_tests=_flaky(runs),
            sandbox=first.sandbox,
            seconds=round(sum(r.seconds for r in runs), 3),
            model_name_or_path=model_name_or_path,
            log=log,
        )
    if cache is not None:
        cache.put(key, result)
    return result
