"""Instances and predictions in the SWE-bench format, and their loaders.

An instance: `instance_id, repo, base_commit, problem_statement, patch` (gold), `test_patch, FAIL_TO_PASS,
PASS_TO_PASS` (lists of pytest node ids, or JSON strings of lists as SWE-bench ships them), optional `test_cmd`
(default: `python -m pytest -rA` over the files test_patch touches), `environment` (a folder or `.tar.gz` of the
repository at base; relative paths are resolved against the instances file) and `env_spec` (the repository's own
Python environment, see `EnvSpec` and `repoenv.py`). Extra fields are kept.

A prediction: `instance_id, model_name_or_path, model_patch`.

Files are JSON Lines, or one JSON list (predictions may also be a JSON object keyed by instance id).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from postgame.errors import PostgameError


class HarnessInputError(PostgameError):
    """An instances or predictions file cannot be read. The message names the file, the line and the problem."""


def _as_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a JSON list of test ids: {exc}") from None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of test ids (strings), got {type(value).__name__}")
    return list(value)


class EnvSpec(BaseModel):
    """A repository's own Python environment: a venv built once (sandboxed), cached, mounted read-only for its runs.

    Its packages come first on the test run's sys.path; the harness's own environment (pytest among it) comes after
    them, so the harness's result plugin always loads and a repository may still pin its own pytest (>= 7)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pip_packages: list[str] = Field(
        default_factory=list,
        description=(
            "Arguments of one `pip install`, in order: requirement strings (`attrs==23.1.0`), local wheels / sdists / "
            "project folders by absolute path, and pip options (`--find-links=/abs/dir`, `--no-build-isolation`)."
        ),
    )
    install: str | None = Field(
        None,
        description=(
            "Shell command run in a copy of the checkout at base_commit after the pip install, with the venv's bin first "
            "on PATH (e.g. `pip install --no-deps -e .`)."
        ),
    )
    python: str | None = Field(
        None,
        description="Python version the repository needs ('3.11', '3.11.7'); it must "
        "match the harness's Python (the venv is made from it), else the build fails.",
    )


class Instance(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    instance_id: str = Field(min_length=1)
    repo: str = Field(min_length=1, description="owner/name; found as <repos>/<owner>__<name>.")
    base_commit: str = ""
    problem_statement: str = ""
    patch: str = Field("", description="The gold patch.")
    test_patch: str = ""
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    test_cmd: str | None = None
    environment: str | None = None
    env_spec: EnvSpec | None = None

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> list[str]:
        return _as_list(value)

    @property
    def repo_dirname(self) -> str:
        return self.repo.replace("/", "__")

    def with_tests(self, fail_to_pass: list[str], pass_to_pass: list[str]) -> Instance:
        return self.model_copy(update={"FAIL_TO_PASS": list(fail_to_pass), "PASS_TO_PASS": list(pass_to_pass)})


class Prediction(BaseModel):
    model_config = ConfigDict(extra="allow")

    instance_id: str = Field(min_length=1)
    model_name_or_path: str = ""
    model_patch: str = ""

    @field_validator("model_patch", "model_name_or_path", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


def _records(path: Path) -> Iterable[tuple[int, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessInputError(f"cannot read {path}: {exc}") from None
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and not path.name.endswith(".jsonl")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise HarnessInputError(f"{path}: not valid JSON: {exc}") from None
        if isinstance(data, dict) and "instance_id" not in data:
            data = [{"instance_id": k, **v} if isinstance(v, dict) else v for k, v in data.items()]
        yield from enumerate(data if isinstance(data, list) else [data], start=1)
        return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as exc:
            raise HarnessInputError(f"{path}:{lineno}: not valid JSON: {exc}") from None


def _describe(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "record"
    return f"{where}: {err['msg']}"


def load_instances(path: str | Path) -> list[Instance]:
    """Read instances (JSONL or a JSON list). Relative `environment` paths are made absolute against the file."""
    path = Path(path)
    out: list[Instance] = []
    seen: set[str] = set()
    for lineno, record in _records(path):
        if not isinstance(record, dict):
            raise HarnessInputError(f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}")
        env = record.get("environment")
        if env and not Path(env).is_absolute():
            record = {**record, "environment": str((path.parent / env).resolve())}
        try:
            inst = Instance.model_validate(record)
        except ValidationError as exc:
            raise HarnessInputError(f"{path}:{lineno}: {_describe(exc)}") from None
        if inst.instance_id in seen:
            raise HarnessInputError(f"{path}:{lineno}: duplicate instance_id {inst.instance_id!r}")
        seen.add(inst.instance_id)
        out.append(inst)
    return out


def load_predictions(path: str | Path) -> list[Prediction]:
    """Read predictions (JSONL, a JSON list, or a JSON object keyed by instance id). A later duplicate wins."""
    path = Path(path)
    by_id: dict[str, Prediction] = {}
    for lineno, record in _records(path):
        if not isinstance(record, dict):
            raise HarnessInputError(f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}")
        try:
            pred = Prediction.model_validate(record)
        except ValidationError as exc:
            raise HarnessInputError(f"{path}:{lineno}: {_describe(exc)}") from None
        by_id[pred.instance_id] = pred
    return list(by_id.values())
