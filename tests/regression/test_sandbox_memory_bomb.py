"""A memory bomb hits the address-space limit (and the memory cgroup) and is graded unresolved, not an error."""

from evals.harness import evaluate
from tests.harness_fixtures import calc_instance, in_function, quick_settings

BOMB = """hoard = []
while True:
    hoard.append(bytearray(32 << 20))
"""


def test_memory_bomb_is_unresolved(tmp_path):
    tiny = calc_instance(tmp_path)
    result = evaluate(
        tiny.instance,
        in_function(tiny, BOMB, "divide"),
        repos_dir=tiny.repos_dir,
        settings=quick_settings(memory_mb=512),
    )
    assert result.status == "unresolved" and result.reward == 0.0 and result.error is None
    assert "tests/test_ops.py::test_divide" in result.tests_status["FAIL_TO_PASS"]["failure"]
    assert "MemoryError" in result.log
