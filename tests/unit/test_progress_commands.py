"""Long commands show a progress bar out of what they will do (issue 23, item 6) only where someone watches: on a
terminal (FORCE_COLOR stands for one while pytest captures stderr), never under --json, whose stdout stays the one
JSON object. The bar's text is the title and `done/total` (postgame.console.progress_bar)."""

from __future__ import annotations

import json

import pytest

from evals.agent.batch import Script, run_episodes
from evals.factory.simulate import SimulationSummary
from postgame.settings.agent import AgentSettings
from postgame.settings.runner import RunnerSettings
from tests.harness_fixtures import calc_instance, quick_settings
from tests.support import postgame_inprocess

GOLD = {"tool": "edit", "args": {"path": "calc/ops.py", "search": "a // b", "replace": "a / b"}}
SUBMIT = {"tool": "submit", "args": {}}


@pytest.fixture
def terminal(monkeypatch):
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")


@pytest.fixture
def two_instances(tmp_path):
    """Two calc instances (two repositories in one folder), as `postgame agent replay --instances` reads them."""
    tiny = [calc_instance(tmp_path), calc_instance(tmp_path, instance_id="acme__calc2-1", repo="acme/calc2")]
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(t.instance.model_dump_json() + "\n" for t in tiny))
    return path, tiny[0].repos_dir, [t.instance for t in tiny]


def test_run_episodes_tells_each_finished_episode_once(two_instances, tmp_path):
    _, repos, instances = two_instances
    told: list[tuple[str, int]] = []
    run_episodes(
        instances,
        Script((GOLD, SUBMIT)),
        agent=AgentSettings(),
        harness=quick_settings(),
        repos_dir=repos,
        out_dir=tmp_path / "out",
        runner=RunnerSettings(kind="serial"),
        progress=lambda instance_id, done: told.append((instance_id, done)),
    )
    assert sorted(told) == [("acme__calc-1", 1), ("acme__calc2-1", 1)]


def replay(monkeypatch, capsys, two_instances, tmp_path, *flags: str) -> tuple[int, str, str]:
    path, repos, _ = two_instances
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps(GOLD) + "\n" + json.dumps(SUBMIT) + "\n")
    monkeypatch.setenv("POSTGAME_RUNNER__KIND", "serial")
    monkeypatch.setenv("POSTGAME_EVAL__TIMEOUT_S", "60")
    args = ["--instances", str(path), "--repos", str(repos), "--script", str(script), "--out", str(tmp_path / "o")]
    return postgame_inprocess(monkeypatch, capsys, "agent", "replay", *args, *flags)


def test_agent_replay_draws_its_bar_out_of_the_instances_on_a_terminal(
    terminal, monkeypatch, capsys, cli_home, two_instances, tmp_path
):
    code, out, err = replay(monkeypatch, capsys, two_instances, tmp_path)
    assert code == 0 and out.startswith("2 episodes: 2 resolved")
    assert "episodes: acme__calc" in err and "2/2" in err


def test_agent_replay_json_draws_no_bar(terminal, monkeypatch, capsys, cli_home, two_instances, tmp_path):
    code, out, err = replay(monkeypatch, capsys, two_instances, tmp_path, "--json")
    assert code == 0 and json.loads(out)["episodes"] == 2
    assert "episodes:" not in err and "/2" not in err


def fake_traffic(cfg, *, sessions, seed, settings, progress=None):
    """The champion's traffic without a champion: tells progress as simulate_traffic does, one batch a session."""
    for n in range(1, sessions + 1):
        if progress:
            progress(f"{n} answered", 1)
    empty = {"parse": 0, "schema": 0}
    return SimulationSummary(sessions, sessions, 0, empty, {}, {}, {}, {"resolved": sessions}, [], "tiny", "1")


def test_simulate_draws_its_bar_out_of_the_sessions_on_a_terminal(terminal, monkeypatch, capsys, cli_home):
    monkeypatch.setattr("models.traffic.simulate_traffic", fake_traffic)
    code, out, err = postgame_inprocess(monkeypatch, capsys, "simulate", "--sessions", "3")
    assert code == 0 and out.startswith("3 sessions by tiny@1")
    assert "simulate: 3 answered" in err and "3/3" in err


def test_simulate_json_draws_no_bar(terminal, monkeypatch, capsys, cli_home):
    monkeypatch.setattr("models.traffic.simulate_traffic", fake_traffic)
    code, out, err = postgame_inprocess(monkeypatch, capsys, "simulate", "--sessions", "3", "--json")
    assert code == 0 and json.loads(out)["sessions"] == 3
    assert err == ""


def test_report_names_its_phase_on_a_terminal_and_nothing_under_json(terminal, monkeypatch, capsys, cli_home):
    """`postgame report` reads the cycles from MLflow and draws charts (about 10 s): a spinner with the phase."""
    code, out, err = postgame_inprocess(monkeypatch, capsys, "report")
    assert code == 0 and "report: writing the report and its charts" in err
    code, out, err = postgame_inprocess(monkeypatch, capsys, "report", "--json")
    assert code == 0 and json.loads(out)["cycles"] == [] and "report:" not in err


def eval_run(monkeypatch, capsys, tmp_path, *flags: str) -> tuple[int, str, str]:
    tiny = calc_instance(tmp_path)
    (tmp_path / "i.jsonl").write_text(tiny.instance.model_dump_json() + "\n")
    gold = {"instance_id": tiny.instance.instance_id, "model_name_or_path": "gold", "model_patch": tiny.gold}
    (tmp_path / "p.jsonl").write_text(json.dumps(gold) + "\n")
    args = ["--instances", str(tmp_path / "i.jsonl"), "--predictions", str(tmp_path / "p.jsonl")]
    args += ["--repos", str(tiny.repos_dir), "--out", str(tmp_path / "out"), "--timeout", "60"]
    return postgame_inprocess(monkeypatch, capsys, "eval", "run", *args, *flags)


def test_eval_run_draws_its_bar_on_a_terminal_and_none_under_json(terminal, monkeypatch, capsys, cli_home, tmp_path):
    code, out, err = eval_run(monkeypatch, capsys, tmp_path / "a")
    assert code == 0 and out.startswith("resolved 1/1")
    assert "eval: 1 resolved" in err and "1/1" in err
    code, out, err = eval_run(monkeypatch, capsys, tmp_path / "b", "--json")
    assert code == 0 and json.loads(out)["resolved_instances"] == 1
    assert "eval:" not in err
