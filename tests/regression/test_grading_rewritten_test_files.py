"""Rewritten test files, new test files, pytest configuration that loads a plugin, and plugin metadata are all
reverted before grading; the model's fix itself stays."""

from evals.harness import evaluate
from tests.harness_fixtures import CALC_BASE, calc_instance, diff_against, quick_settings

CHEAT = """import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""


def test_rewritten_tests_and_config_are_reverted(tmp_path):
    tiny = calc_instance(tmp_path)
    patch = diff_against(
        tiny.base_files,
        {
            "tests/test_ops.py": "def test_divide():\n    pass\n\n\ndef test_add():\n    pass\n",
            "tests/test_extra.py": "def test_more():\n    pass\n",
            "calc/cheat.py": CHEAT,
            "pytest.ini": "[pytest]\naddopts = -p calc.cheat\n",
            "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-p calc.cheat'\n",
            "cheat-1.0.dist-info/entry_points.txt": "[pytest11]\ncheat = calc.cheat\n",
            "cheat-1.0.dist-info/METADATA": "Name: cheat\nVersion: 1.0\n",
        },
    )
    result = evaluate(tiny.instance, patch, repos_dir=tiny.repos_dir, settings=quick_settings())
    assert result.status == "unresolved" and result.reward == 0.0
    assert set(result.reverted_files) == {
        "tests/test_ops.py",
        "tests/test_extra.py",
        "pytest.ini",
        "pyproject.toml",
        "cheat-1.0.dist-info/entry_points.txt",
        "cheat-1.0.dist-info/METADATA",
    }
    assert result.tests_status["FAIL_TO_PASS"]["failure"] == ["tests/test_ops.py::test_divide"]


def test_plugin_on_the_repository_path_is_not_autoloaded(tmp_path):
    # Dist-info put in the base itself (not by the model): the repository joins sys.path only after autoload.
    base = {
        **CALC_BASE,
        "calc/cheat.py": CHEAT,
        "cheat-1.0.dist-info/entry_points.txt": "[pytest11]\ncheat = calc.cheat\n",
        "cheat-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: cheat\nVersion: 1.0\n",
    }
    tiny = calc_instance(tmp_path, base_files=base)
    result = evaluate(tiny.instance, "", repos_dir=tiny.repos_dir, settings=quick_settings())
    assert result.status == "unresolved"
    from evals.harness import run_tests

    run = run_tests(tiny.instance, "", repos_dir=tiny.repos_dir, settings=quick_settings())
    assert run.statuses["tests/test_ops.py::test_divide"] == "FAILED"
