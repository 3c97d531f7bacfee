"""A fork bomb is contained (pids cgroup as root, RLIMIT_NPROC otherwise), graded unresolved, and leaves nothing
behind: the machine stays healthy and the suite goes on."""

import os
import subprocess

import pytest

from evals.harness import evaluate
from tests.harness_fixtures import calc_instance, quick_settings, with_code

BOMB = """import os
if os.environ.get("USER") == "sandbox":  # never outside the harness
    while True:
        try:
            os.fork()
        except OSError:
            pass
"""


def _processes() -> int:
    return sum(1 for name in os.listdir("/proc") if name.isdigit())


@pytest.mark.sandbox("pids")
def test_fork_bomb_is_contained_and_unresolved(tmp_path):
    tiny = calc_instance(tmp_path)
    before = _processes()
    result = evaluate(
        tiny.instance,
        with_code(tiny, BOMB),
        repos_dir=tiny.repos_dir,
        settings=quick_settings(timeout_s=5, max_processes=48),
    )
    assert result.status == "unresolved" and result.reward == 0.0 and result.error is None
    assert _processes() < before + 20, "sandboxed processes survived the run"
    assert subprocess.run(["true"]).returncode == 0  # the machine can still fork
