"""SFT on trajectories (curated from schema-v2 agent sessions): the loss sees the assistant turns only — never a tool
result or the prompt — and a real TRL run trains on them with the data plan kept (no example skipped or repeated)."""

from __future__ import annotations

import pytest

from evals.agent import make_environment
from evals.agent.episode import ScriptedPolicy, run_episode, tool_schemas
from models.agent import COMPACT_TEMPLATE, template_messages
from models.policy import SHIPPED_BASE
from models.train import TrainJob, fit, get_trainer, preference_features, trajectory_features
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
    from models.tokenizer import load_tokenizer

    tok = load_tokenizer(SHIPPED_BASE)
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


REJECTED = [
    {"tool": "run_tests", "args": {}},
    {"tool": "edit", "args": {"path": "calc/ops.py", "search": "a // b", "replace": "int(a / b)"}},
    {"tool": "submit", "args": {}},
]


@pytest.fixture(scope="module")
def pair(tmp_path_factory, trajectory):
    tiny = calc_instance(tmp_path_factory.mktemp("calc-rejected"))
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tiny.repos_dir)
    failed = run_episode(env, tiny.instance, ScriptedPolicy(REJECTED))
    assert failed.result.outcome == "submitted" and not failed.result.resolved
    messages, tools = trajectory
    row = {
        "example_id": "dpo:1",
        "instance_id": "acme__calc-1",
        "kind": "dpo",
        "chosen_messages": messages,
        "rejected_messages": failed.messages,
    }
    return row, tools


def test_a_trajectory_pair_shares_its_prompt_and_is_scored_on_the_assistant_turns_only(pair):
    row, tools = pair
    tok = _tokenizer()
    (features,) = preference_features(tok, [row], tools)
    chosen = tok.decode([t for t, m in zip(features["chosen_ids"], features["chosen_masks"]) if m])
    rejected = tok.decode([t for t, m in zip(features["rejected_ids"], features["rejected_masks"]) if m])
    # the shared first turn (run_tests) and its result are prompt; the sides part at the edit
    assert "run_tests" in tok.decode(features["prompt_ids"]) and "visible tests" in tok.decode(features["prompt_ids"])
    assert "a / b" in chosen and "int(a / b)" in rejected
    assert "submit" in chosen and "visible tests" not in chosen + rejected  # tool results: never scored


def test_dpo_on_trajectories_masks_the_tool_results_in_what_trl_scores(pair, tmp_path):
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM

    row, tools = pair
    tok = _tokenizer()
    job = TrainJob(
        method="dpo",
        policy_dir=SHIPPED_BASE,
        rows=[row],
        work_dir=tmp_path / "work",
        settings=TrainSettings(method="dpo", max_steps=1, batch_size=2, num_generations=2),
        tools=tools,
    )
    data = Dataset.from_list(preference_features(tok, [row], tools))
    model = AutoModelForCausalLM.from_pretrained(SHIPPED_BASE, dtype=torch.float32)
    common = dict(output_dir=str(tmp_path / "ckpt"), max_steps=1, use_cpu=True, report_to=[])
    trainer = get_trainer("dpo").build(job, model, tok, common, data)
    batch = trainer.data_collator([dict(data[0])])
    f = data[0]
    assert (
        batch["completion_mask"][0].tolist()[: len(f["prompt_ids"]) + len(f["chosen_ids"])]
        == [0] * len(f["prompt_ids"]) + f["chosen_masks"]
    )
    assert int(batch["completion_mask"][1].sum()) == sum(f["rejected_masks"])


def test_dpo_trains_on_trajectory_pairs_with_the_data_plan_kept(pair, tmp_path):
    row, tools = pair
    rows = [{**row, "example_id": f"dpo:{n}"} for n in range(4)]
    result = fit(
        TrainJob(
            method="dpo",
            policy_dir=SHIPPED_BASE,
            rows=rows,
            work_dir=tmp_path / "work",
            settings=TrainSettings(method="dpo", max_steps=2, batch_size=2, num_generations=2, seed=0),
            tools=tools,
        )
    )
    assert result.steps == 2 and sorted(i for ids in result.seen for i in ids) == ["dpo:0", "dpo:1", "dpo:2", "dpo:3"]
    assert (tmp_path / "work" / "model" / "model.safetensors").exists()
