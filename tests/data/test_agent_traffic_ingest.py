"""Agent traffic: real episodes in the sandboxed environment, logged by the simulator as schema-v2 records (every
message, tool call and tool result), ingested by the real ingest — kept, secrets planted in tool results redacted,
tool calls intact — and curated into SFT rows that carry the trajectory."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from evals.agent.batch import Script, play_episodes
from evals.factory.simulate import simulate
from postgame.contract.arrow import to_record
from postgame.curate import curate_snapshots, load_rows, rows_of
from postgame.ingest import load_snapshot, run_ingest
from postgame.ingest.redact import redact_text
from postgame.settings.agent import AgentSettings
from postgame.settings.factory import SimulatorSettings
from postgame.settings.runner import RunnerSettings
from postgame.store import LocalStore
from tests.harness_fixtures import calc_instance, quick_settings
from tests.support import make_config

GOLD = {"tool": "edit", "args": {"path": "calc/ops.py", "search": "a // b", "replace": "a / b"}}
RUN = {"tool": "run_tests", "args": {}}
SUBMIT = {"tool": "submit", "args": {}}


def _player(tiny, script: Script, calls: list[int] | None = None):
    """The simulator's `play`: the script's episodes in the sandbox, serially; each call's size noted in `calls`."""

    def play(instances, prompts, progress=None):
        if calls is not None:
            calls.append(len(instances))
        return play_episodes(
            instances,
            script,
            agent=AgentSettings(),
            harness=quick_settings(),
            repos_dir=tiny.repos_dir,
            runner=RunnerSettings(kind="serial"),
            contexts={i.instance_id: p for i, p in zip(instances, prompts)},
            progress=progress,
        )

    return play


def test_agent_episodes_are_logged_as_v2_ingested_and_curated_with_their_tool_calls(home, tmp_path):
    tiny = calc_instance(tmp_path)
    play = _player(tiny, Script((RUN, GOLD, RUN, SUBMIT)))
    logs = LocalStore(tmp_path / "logs")
    knobs = SimulatorSettings(secret_rate=1.0)
    summary = simulate(
        [tiny.instance],
        None,
        None,
        sessions=2,
        store=logs,
        settings=knobs,
        seed=3,
        play=play,
        model_name="policy",
        model_version="1",
        now=datetime(2026, 12, 1, 12, tzinfo=UTC),
        files_for=lambda inst: dict(tiny.base_files),
    )
    assert summary.outcomes == {"resolved": 2} and len(summary.secret_sessions) == 2
    cfg = make_config(home, curate={"min_records": 1})
    ingested = run_ingest(str(tmp_path / "logs" / knobs.log_prefix), cfg=cfg)
    assert ingested.records_ingested == 2 and sum(ingested.quarantined.values()) == 0
    rows = load_snapshot(ingested.snapshot_id, cfg=cfg).to_pylist()
    tool_text = [m["content"] for r in rows for m in r["messages"] if m["role"] == "tool"]
    assert sum("<REDACTED:" in t for t in tool_text) == 2  # one planted secret per session, in a tool result
    assert all(redact_text(t) == t for t in tool_text)  # nothing left that redaction would change
    assert [to_record(r)["outcome"]["tests_broken"] for r in rows] == [0, 0]  # beyond the contract, kept for curate
    dataset = curate_snapshots(cfg, [ingested.snapshot_id], {tiny.instance.instance_id: "train"})
    sft = rows_of(load_rows(cfg, dataset), "sft")
    assert sft  # resolved and accepted by the user (the simulated feedback accepts most resolved sessions)
    messages = sft[0]["messages"]
    calls = [c["function"] for m in messages if m.get("tool_calls") for c in m["tool_calls"]]
    assert [c["name"] for c in calls] == ["run_tests", "edit", "run_tests", "submit"]
    assert json.loads(calls[1]["arguments"]) == GOLD["args"]
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    assert answered == {c["id"] for m in messages if m.get("tool_calls") for c in m["tool_calls"]}


def test_a_round_of_agent_traffic_is_played_in_one_call_with_progress_per_episode(tmp_path):
    # one call, so one pool of workers for the whole round (a pool per batch of 8 started 12 pools a demo round, each
    # importing torch and loading the model, and left a worker idle at each batch's end: 1.47x the wall time,
    # BENCHMARKS.md "Session 36"); the bar still moves episode by episode
    tiny = calc_instance(tmp_path)
    calls: list[int] = []
    ticks: list[int] = []
    play = _player(tiny, Script((GOLD, SUBMIT)), calls)

    summary = simulate(
        [tiny.instance],
        None,
        None,
        sessions=3,
        store=LocalStore(tmp_path / "logs"),
        settings=SimulatorSettings(batch_size=1),
        play=play,
        now=datetime(2026, 12, 1, 12, tzinfo=UTC),
        files_for=lambda inst: dict(tiny.base_files),
        progress=lambda text, n: ticks.append(n),
    )
    assert calls == [3] and summary.outcomes == {"resolved": 3}
    assert ticks.count(1) == 3 and sum(ticks) == 3
