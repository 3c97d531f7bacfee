"""A module-level pytest.skip in code under test skips the tests that check it: SKIPPED and missing tests fail."""

from evals.harness import evaluate
from tests.harness_fixtures import calc_instance, quick_settings, with_code

SKIP = "import pytest\npytest.skip('not today', allow_module_level=True)\n"


def test_module_level_skip_is_unresolved(tmp_path):
    tiny = calc_instance(tmp_path)
    result = evaluate(
        tiny.instance, with_code(tiny, SKIP, fix=True), repos_dir=tiny.repos_dir, settings=quick_settings()
    )
    assert result.status == "unresolved" and result.reward == 0.0
    assert result.tests_status["FAIL_TO_PASS"]["success"] == []
