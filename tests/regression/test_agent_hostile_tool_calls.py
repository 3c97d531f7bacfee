"""The patch suite's hostile cases, replayed as an agent's tool calls (bash on): contained exactly as for patches.
Writes outside the copy, reads of host secrets, loopback connections to the host, output floods, memory and fork
bombs, git history, and symlinks that would make the host-side file tools read or write outside the copy."""

from __future__ import annotations

import socket
import threading

import pytest

from evals.agent import make_environment
from evals.agent.episode import ScriptedPolicy, run_episode
from postgame.settings.agent import AgentSettings, parse_tools
from tests.harness_fixtures import calc_instance, quick_settings

pytestmark = pytest.mark.sandbox("bwrap")  # bash runs only in the bwrap sandbox
SECRET = "pg-agent-secret-51c0de"


def bash(cmd):
    return {"tool": "bash", "args": {"command": cmd}}


def play(tmp_path, calls, **agent):
    tiny = calc_instance(tmp_path)
    settings = AgentSettings(tools=parse_tools("all"), max_steps=30, **agent)
    env = make_environment(settings, quick_settings(), repos_dir=tiny.repos_dir)
    traj = run_episode(env, tiny.instance, ScriptedPolicy([*calls, {"tool": "submit", "args": {}}]))
    return traj, [m["content"] for m in traj.messages if m["role"] == "tool"]


def test_writes_outside_the_copy_and_host_secrets(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    outside = tmp_path / "outside.txt"
    traj, obs = play(
        tmp_path,
        [
            bash(f"echo pwned > {outside}; echo rc=$?"),
            bash(f"cat {home}/.aws/credentials; env"),
            bash("echo inside > made_here.txt; cat made_here.txt"),
        ],
    )
    assert not outside.exists() and "rc=" in obs[0]
    assert SECRET not in "".join(str(m) for m in traj.messages)
    assert "inside" in obs[2]  # the copy itself is writable


def test_no_loopback_to_the_host_and_no_git_history(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    probe = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)\"; echo rc=$?"
    try:
        _, obs = play(tmp_path, [bash(probe), bash("git log --all --oneline; ls -a")])
    finally:
        server.close()
    assert not accepted and "rc=1" in obs[0]
    assert "fix divide" not in obs[1] and ".git" not in obs[1].split()


def test_an_output_flood_is_capped(tmp_path):
    traj, obs = play(tmp_path, [bash("yes flood | head -c 20000000")], max_observation_chars=1000)
    assert len(obs[0]) <= 1000 and "cut" in obs[0]


def test_memory_and_fork_bombs_are_contained(tmp_path):
    bombs = [
        bash('python3 -c "x = bytearray(8 << 30)"; echo rc=$?'),
        bash('python3 -c "import os\nwhile True:\n    os.fork()" ; echo done'),
    ]
    traj, obs = play(tmp_path, bombs, step_timeout_s=10)
    assert "MemoryError" in obs[0] and "rc=1" in obs[0]
    # The fork bomb hits the process limit (and dies) or the step timeout (the episode ends): never the host.
    assert traj.result.outcome in ("submitted", "timeout")


def test_symlinks_made_in_the_sandbox_are_never_followed_by_the_file_tools(tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text(SECRET)
    target = tmp_path / "host-target.py"
    target.write_text("untouched\n")
    calls = [
        bash(f"ln -s {secret} leak.txt && ln -s {tmp_path} hostdir && ls"),
        {"tool": "view", "args": {"path": "leak.txt"}},
        {"tool": "view", "args": {"path": "hostdir/host-secret.txt"}},
        {"tool": "search", "args": {"pattern": "pg-agent", "path": "."}},
        {"tool": "edit", "args": {"path": "hostdir/host-target.py", "search": "untouched", "replace": "owned"}},
    ]
    traj, obs = play(tmp_path, calls, max_invalid_actions=10)
    assert "symbolic link" in obs[1] and "symbolic link" in obs[2] and "symbolic link" in obs[4]
    assert SECRET not in "".join(str(m) for m in traj.messages)
    assert target.read_text() == "untouched\n"
