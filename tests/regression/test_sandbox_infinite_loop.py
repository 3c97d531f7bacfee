"""A hang is the model's failure (unresolved, reward 0), never an infrastructure error: otherwise a policy learns to
hang to dodge a zero reward. The whole tree is killed at the timeout."""

import time

from evals.harness import evaluate
from tests.harness_fixtures import calc_instance, in_function, quick_settings, with_code


def test_infinite_loop_in_code_under_test_is_unresolved(tmp_path):
    tiny = calc_instance(tmp_path)
    patch = in_function(tiny, "while True:\n    pass\n", "divide")
    start = time.monotonic()
    result = evaluate(tiny.instance, patch, repos_dir=tiny.repos_dir, settings=quick_settings(timeout_s=3))
    assert result.timed_out
    assert result.status == "unresolved" and result.reward == 0.0 and result.error is None
    assert time.monotonic() - start < 30


def test_hang_after_every_test_passed_is_still_unresolved(tmp_path):
    tiny = calc_instance(tmp_path)
    hang = "import threading, time\nthreading.Thread(target=lambda: time.sleep(10**6)).start()\n"
    patch = with_code(tiny, hang, fix=True)
    result = evaluate(tiny.instance, patch, repos_dir=tiny.repos_dir, settings=quick_settings(timeout_s=3))
    assert result.timed_out and result.status == "unresolved" and result.reward == 0.0
