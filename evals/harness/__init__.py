"""SWE-style evaluation harness: graded like SWE-bench, every test run sandboxed, the grader out of the model's reach.

    from evals.harness import evaluate, load_instances, HarnessSettings
    result = evaluate(instance, patch, repos_dir="repos", settings=HarnessSettings())

    postgame eval run --instances F.jsonl --predictions P.jsonl --repos DIR --out OUTDIR

Modules: `instance` (formats), `environment` (base export, no history), `patching` + `searchreplace` (applying
patches; `paths` checks the paths both write), `protect` (reverting changes to tests/pytest), `sandbox` + `cgroups`
(containment), `repoenv` (per-repository environments from an instance's `env_spec`), `testrun` (one run),
`results` (what the in-sandbox plugin recorded), `grading` (pure SWE-bench semantics), `evaluator` (grade + cache),
`run` (batches and reports), `reward` (TRL reward function), `selfcheck` (gold resolves, empty does not, the test
patch alone fails), `cli`; `inside/` runs in the sandbox; `examples/` holds hand-written instances. Imports are lazy:
importing this package costs nothing beyond pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from postgame.settings.harness import HarnessSettings

_EXPORTS = {
    "Instance": "instance",
    "Prediction": "instance",
    "load_instances": "instance",
    "load_predictions": "instance",
    "HarnessInputError": "instance",
    "TestRun": "testrun",
    "run_tests": "testrun",
    "GradeResult": "evaluator",
    "GradeCache": "evaluator",
    "evaluate": "evaluator",
    "RunReport": "run",
    "run_evaluation": "run",
    "make_reward_fn": "reward",
    "TestStatus": "constants",
    "Resolution": "constants",
    "GradeStatus": "constants",
    "ApplyResult": "patching",
    "apply_patch": "patching",
    "grading": None,
}

__all__ = ["HarnessSettings", *_EXPORTS]

if TYPE_CHECKING:
    from evals.harness import grading
    from evals.harness.constants import GradeStatus, Resolution, TestStatus
    from evals.harness.evaluator import GradeCache, GradeResult, evaluate
    from evals.harness.instance import HarnessInputError, Instance, Prediction, load_instances, load_predictions
    from evals.harness.patching import ApplyResult, apply_patch
    from evals.harness.reward import make_reward_fn
    from evals.harness.run import RunReport, run_evaluation
    from evals.harness.testrun import TestRun, run_tests


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'evals.harness' has no attribute {name!r}")
    module = _EXPORTS[name]
    if module is None:
        return importlib.import_module(f"evals.harness.{name}")
    return getattr(importlib.import_module(f"evals.harness.{module}"), name)
