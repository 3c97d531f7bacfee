"""A SIGKILL of the process running an episode (mid-command) leaves no sandbox, process or folder behind once the
reaper has run: the sandbox dies with its parent (bwrap --die-with-parent; rlimits-mode processes are killed by the
reaper), and the episode folder, whose owner is dead, is removed. A live owner's folder is never touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from evals.agent.workspace import PREFIX, reap
from evals.harness.testrun import work_root
from tests.harness_fixtures import calc_instance, quick_settings

CHILD = """
import sys
from pathlib import Path
from evals.agent import make_environment
from evals.harness.instance import Instance
from postgame.settings.agent import AgentSettings
from tests.harness_fixtures import quick_settings
inst = Instance.model_validate_json(Path(sys.argv[1]).read_text())
harness = quick_settings(timeout_s=300, work_dir=sys.argv[3])
env = make_environment(AgentSettings(step_timeout_s=300), harness, repos_dir=sys.argv[2])
env.reset(inst)
env.edit(path="calc/ops.py", search="def add(a, b):\\n", replace="def add(a, b):\\n    import time; time.sleep(600)\\n")
print("running", flush=True)
env.run_tests()
"""


def _episode_dirs(root: Path) -> set[Path]:
    return {p for p in root.iterdir() if p.name.startswith(PREFIX)}


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                if text in (proc / "cmdline").read_bytes().decode("utf-8", "replace"):
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


def test_sigkill_mid_episode_then_reap_leaves_nothing(tmp_path):
    tiny = calc_instance(tmp_path)
    root = tmp_path / "work"  # its own: an episode of anything else running on the machine is not this one's
    root.mkdir()
    settings = quick_settings(work_dir=str(root))
    assert work_root(settings) == root
    (tmp_path / "inst.json").write_text(tiny.instance.model_dump_json())
    before = _episode_dirs(root)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "inst.json"), str(tiny.repos_dir), str(root)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "running"
    (episode,) = _episode_dirs(root) - before
    deadline = time.monotonic() + 30
    while not _processes_mentioning(f"{episode}/testbed"):  # the sandbox of the test run (bwrap binds the copy)
        assert time.monotonic() < deadline, "the test run never started"
        time.sleep(0.2)
    time.sleep(1.0)  # pytest is inside the sleeping test now
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert episode.exists()  # what a crash leaves: the folder (the owner could not clean up)
    removed = reap(settings)
    assert str(episode) in removed and not episode.exists()
    deadline = time.monotonic() + 10
    while _processes_mentioning(str(episode)):
        assert time.monotonic() < deadline, f"left running: {_processes_mentioning(str(episode))}"
        time.sleep(0.2)


def test_reap_leaves_a_live_owners_episode_alone(tmp_path):
    from evals.agent import make_environment
    from postgame.settings.agent import AgentSettings

    tiny = calc_instance(tmp_path)
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tiny.repos_dir)
    env.reset(tiny.instance)
    try:
        ws_root = env._workspace.root
        assert str(ws_root) not in reap(quick_settings()) and ws_root.exists()
    finally:
        env.close()
    assert not ws_root.exists()
