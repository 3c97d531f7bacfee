"""Printing fake PASSED lines and exiting 0 before pytest finishes resolves nothing (SWE-bench #601/#620): results
come from the plugin's records, and a run that never reached its end counts every test as failed."""

from evals.harness import evaluate
from tests.harness_fixtures import CALC_F2P, CALC_P2P, calc_instance, quick_settings, with_code

# Suspend pytest's capture so the lines reach the real stdout, as a determined forger would.
FORGE = (
    (
        "import gc, os\nfor _o in gc.get_objects():\n    if type(_o).__name__ == 'CaptureManager':\n"
        "        _o.suspend_global_capture(in_=True)\n        break\n"
    )
    + "".join(f"print('PASSED {t}')\n" for t in CALC_F2P + CALC_P2P)
    + ("print('============ 4 passed in 0.01s ============', flush=True)\nos._exit(0)\n")
)


def test_forged_passed_lines_then_exit_zero_is_unresolved(tmp_path):
    tiny = calc_instance(tmp_path)
    result = evaluate(tiny.instance, with_code(tiny, FORGE), repos_dir=tiny.repos_dir, settings=quick_settings())
    assert "PASSED tests/test_ops.py::test_divide" in result.log  # it did print them
    assert result.status == "unresolved" and result.reward == 0.0 and result.error is None
    assert result.tests_status["FAIL_TO_PASS"]["success"] == []
    assert result.tests_status["PASS_TO_PASS"]["success"] == []
