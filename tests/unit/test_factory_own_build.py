"""A registered repository in the task world: its real bug fixes mined from its history (only genuine runtime
FAIL_TO_PASS kept, each drop counted by reason), its synthetic bugs built by the mutation operators beside the shipped
seeds (whose splits do not move), every instance carrying the environment it runs in, and a split exported that
`postgame eval run` grades: gold resolves, the empty patch does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.factory.build import build
from evals.factory.mine import mine_project, mined_records
from evals.factory.projects import add_project
from evals.factory.splits import assign_splits
from evals.harness import evaluate
from evals.harness.instance import Instance, load_instances
from postgame.settings.factory import FactorySettings
from postgame.store import LocalStore
from tests.harness_fixtures import commit, init_repo, quick_settings
from tests.unit.test_harness_repoenv import DEP, make_wheel

SETUP = "from setuptools import setup\nsetup(name='clampy', install_requires=['" + DEP + "'])\n"
BUGGY = (
    f"from {DEP} import clamp\n\n\n"
    "def clamp_all(xs, lo, hi):\n    return [clamp(x, lo, hi) for x in xs][:-1]\n\n\n"
    "def span(xs):\n    return max(xs) - min(xs)\n"
)
TESTS = (
    "from clampy.core import clamp_all, span\n\n\n"
    "def test_inside():\n    assert clamp_all([1, 2, 3], 0, 5)[:2] == [1, 2]\n\n\n"
    "def test_span():\n    assert span([3, 1, 7]) == 6\n"
)
EVERY = "\n\ndef test_every_item():\n    assert clamp_all([1, 9, -3], 0, 5) == [1, 5, 0]\n"
MEAN = "\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n"
MEAN_TEST = "from clampy.core import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n"
SPAN_REFACTOR = "    lo, hi = min(xs), max(xs)\n    return hi - lo\n"


def history(root: Path) -> Path:
    """c0 base; c1 a real fix with its test; c2 a new function whose test imports it; c3 docs; c4 a refactor."""
    init_repo(root, {"setup.py": SETUP, "clampy/__init__.py": "", "clampy/core.py": BUGGY, "tests/test_core.py": TESTS})
    fixed = BUGGY.replace("for x in xs][:-1]", "for x in xs]")
    commit(root, {"clampy/core.py": fixed, "tests/test_core.py": TESTS + EVERY}, "keep the last item")
    commit(root, {"clampy/core.py": fixed + MEAN, "tests/test_mean.py": MEAN_TEST}, "add mean")
    commit(root, {"README.md": "clampy\n"}, "docs")
    refactored = (fixed + MEAN).replace("    return max(xs) - min(xs)\n", SPAN_REFACTOR)
    span_one = "\n\ndef test_span_one():\n    assert span([4]) == 0\n"
    commit(root, {"clampy/core.py": refactored, "tests/test_core.py": TESTS + EVERY + span_one}, "refactor span")
    return root


@pytest.fixture
def world(tmp_path):
    wheels = make_wheel(tmp_path / "wheels").parent
    settings = FactorySettings(
        projects=["semver"],
        candidates_per_project=3,
        instances_per_project=1,
        workers=2,
        own={
            "pip_download_args": ["--no-index", f"--find-links={wheels}"],
            "timeout_s": 60,
            "candidates_per_project": 14,
            "instances_per_project": 3,
            "mine_runs": 2,
        },
    )
    store, cache = LocalStore(tmp_path / "store"), tmp_path / "cache"
    add_project(str(history(tmp_path / "clampy")), settings, quick_settings(), store, cache_dir=cache)
    return settings, store, cache


def local(store: LocalStore, uri: str) -> str:
    return uri.removeprefix("file://")


needs_bwrap = pytest.mark.sandbox("bwrap")


@needs_bwrap
def test_mined_bugs_are_genuine_and_each_drop_is_counted(tmp_path, world):
    settings, store, cache = world
    result = mine_project("clampy", settings, quick_settings(), store, cache_dir=cache, max_kept=5)
    assert (result.commits_examined, result.candidates, result.kept) == (5, 3, 1)
    # c2's test fails at base only because it imports `mean`, which the fix adds: not a genuine FAIL_TO_PASS
    assert result.dropped == {"import_only": 1, "no_fail_to_pass": 1, "not_code_and_tests": 2}
    (rec,) = mined_records(settings, store, "clampy")
    assert rec["FAIL_TO_PASS"] == ["tests/test_core.py::test_every_item"]
    assert rec["PASS_TO_PASS"] == ["tests/test_core.py::test_inside", "tests/test_core.py::test_span"]
    assert rec["split"] == "indomain" and rec["env_spec"] and "tests/test_core.py" in rec["test_cmd"]
    assert "keep the last item" not in json.dumps(rec)  # the commit message is no hint

    inst = Instance.model_validate({**rec, "environment": local(store, rec["environment"])})
    settings_h = quick_settings(timeout_s=60)
    assert evaluate(inst, inst.patch, repos_dir=None, settings=settings_h).status == "resolved"
    assert evaluate(inst, "", repos_dir=None, settings=settings_h).status == "unresolved"


@needs_bwrap
def test_synthetic_and_mined_bugs_join_the_build_and_export(tmp_path, world):
    settings, store, cache = world
    mine_project("clampy", settings, quick_settings(), store, cache_dir=cache, max_kept=5)
    result = build(settings, quick_settings(), store, cache_dir=cache)
    assert result.projects["clampy"].kept == 3 and result.projects["clampy"].split == "train"
    assert result.projects["semver"].split == assign_splits(["semver"], settings)["semver"]  # the seed did not move

    out = tmp_path / "export"
    from evals.factory.instances import export_split
    from tests.support import make_config

    (tmp_path / "home").mkdir()
    cfg = make_config(tmp_path / "home", store={"uri": str(tmp_path / "store")}, factory=settings.model_dump())
    exported = export_split(cfg, "indomain", out, project="clampy")
    instances = load_instances(exported.instances_path)
    mined = [i for i in instances if getattr(i, "mined_from", None)]
    synthetic = [i for i in instances if not getattr(i, "mined_from", None)]
    assert len(mined) == 1 and Path(mined[0].environment).is_file()  # its base snapshot travels with the export
    assert all(i.env_spec is not None and i.test_cmd for i in instances)  # every instance carries its environment
    assert result.per_split["indomain"] == len(instances) == 1 + len(synthetic)  # the mined one and the held-out share

    hs = quick_settings(timeout_s=60)
    for inst in instances:
        assert evaluate(inst, inst.patch, repos_dir=exported.repos_dir, settings=hs).status == "resolved", inst
        assert evaluate(inst, "", repos_dir=exported.repos_dir, settings=hs).status == "unresolved"
