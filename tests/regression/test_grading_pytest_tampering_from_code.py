"""Code under test that registers a pytest plugin or replaces pytest internals at import time (the conftest attack
moved into library code) is detected: every result is void."""

import pytest

from evals.harness import evaluate
from tests.harness_fixtures import calc_instance, quick_settings, with_code

REGISTER = """import gc, pytest

class _Force:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        outcome.get_result().outcome = "passed"

for _obj in gc.get_objects():
    if type(_obj).__name__ == "Config" and hasattr(_obj, "pluginmanager"):
        _obj.pluginmanager.register(_Force(), "force")
        break
"""

PATCH_INTERNALS = """import _pytest.reports

_orig = _pytest.reports.TestReport.__init__

def _init(self, *args, **kwargs):
    _orig(self, *args, **kwargs)
    self.outcome = "passed"

_pytest.reports.TestReport.__init__ = _init
"""


@pytest.mark.parametrize(
    "code,flag", [(REGISTER, "registered during the run"), (PATCH_INTERNALS, "internals replaced")]
)
def test_pytest_tampering_from_code_is_void(tmp_path, code, flag):
    tiny = calc_instance(tmp_path)
    result = evaluate(tiny.instance, with_code(tiny, code), repos_dir=tiny.repos_dir, settings=quick_settings())
    assert result.status == "unresolved" and result.reward == 0.0
    assert any(flag in t for t in result.tampering), result.tampering
