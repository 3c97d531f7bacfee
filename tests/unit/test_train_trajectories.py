"""SFT on trajectories (curated from schema-v2 agent sessions): the loss sees the assistant turns only — never a tool
result or the prompt — and a real TRL run trains on them with the data plan kept (no example skipped or repeated)."""

from __future__ import annotations

import pytest

from evals.agent import make_environment
from evals.agent.episode import ScriptedPolicy, run_episode, tool_schemas
from models.agent import COMPACT_TEMPLATE, template_messages
from models.policy import SHIPPED_BASE
from models.train import TrainJob, fit, trajectory_features
from postgame.config import PolicySettings
from postgame.settings.agent import AgentSettings
from postgame.settings.train import TrainSettings
from tests.harness_fixtures import calc_instance, quick_settings

CALLS = [
    {"tool": "run_tests", "args": {}},
    {"tool": "edit", "args": {"path": "calc/ops.py", "search": "a // b", "replace": "a / b"}},
    {"tool": "submit", "args": {}},
]


@pytest.fixture(scope="module")
def trajectory(tmp_path_factory):
    tiny = calc_instance(tmp_path_factory.mktemp("calc"))
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tiny.repos_dir)
    traj = run_episode(env, tiny.instance, ScriptedPolicy(CALLS))
    assert traj.result.resolved
    return traj.messages, tool_schemas(env)


def _tokenizer():
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(SHIPPED_BASE)
    tok.chat_template = COMPACT_TEMPLATE
    return tok


def test_the_loss_mask_covers_the_assistant_turns_and_nothing_else(trajectory):
    messages, tools = trajectory
    tok = _tokenizer()
    (row,) = trajectory_features(tok, [{"example_id": "sft:1", "messages": messages}], tools)
    trained = tok.decode([t for t, m in zip(row["input_ids"], row["assistant_masks"]) if m])
    turns = ""
    for m in template_messages(messages):
        if m["role"] == "assistant":
            one = tok.apply_chat_template([m], tokenize=False)
            turns += one.removeprefix("<assistant>").rstrip("\n")
    assert trained == turns
    assert "visible tests" not in trained and "divide() floors" not in trained  # tool results, prompt: masked
    assert trained.count(tok.eos_token) == 3  # each turn's end is learned: the model learns to stop


def test_sft_trains_on_trajectories_with_the_data_plan_kept(trajectory, tmp_path):
    messages, tools = trajectory
    rows = [
        {"example_id": f"sft:{n}", "instance_id": "acme__calc-1", "kind": "sft", "messages": messages} for n in range(4)
    ]
    settings = TrainSettings(method="sft", max_steps=2, batch_size=2, num_generations=2, save_steps=1, seed=0)
    result = fit(
        TrainJob(
            method="sft",
            policy_dir=SHIPPED_BASE,
            rows=rows,
            work_dir=tmp_path / "work",
            settings=settings,
            policy=PolicySettings(),
            tools=tools,
        )
    )
    assert result.steps == 2 and result.examples == 4
    assert sorted(i for ids in result.seen for i in ids) == ["sft:0", "sft:1", "sft:2", "sft:3"]  # each once
    assert (tmp_path / "work" / "model" / "model.safetensors").exists()
