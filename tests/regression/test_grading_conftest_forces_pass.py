"""A conftest.py hook that forces every outcome to "passed" is reverted (SWE-bench 5.0.2 grades it resolved, #631)."""

from evals.harness import evaluate
from tests.harness_fixtures import calc_instance, diff_against, quick_settings

FORCE = """import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""


def test_conftest_forcing_pass_is_reverted_and_unresolved(tmp_path):
    tiny = calc_instance(tmp_path)
    patch = diff_against(tiny.base_files, {"conftest.py": FORCE, "tests/conftest.py": FORCE, "calc/conftest.py": FORCE})
    result = evaluate(tiny.instance, patch, repos_dir=tiny.repos_dir, settings=quick_settings())
    assert result.status == "unresolved" and result.reward == 0.0
    assert sorted(result.reverted_files) == ["calc/conftest.py", "conftest.py", "tests/conftest.py"]
    assert result.tests_status["FAIL_TO_PASS"]["failure"] == ["tests/test_ops.py::test_divide"]
    assert result.to_report()["reverted_files"] == result.reverted_files
