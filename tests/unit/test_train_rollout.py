"""GRPO in the environment (models/rollout.py): whole episodes in the real sandbox as TRL rollouts. The loss sees the
model's tokens only, never a tool result; an infrastructure error is out of the loss (None), never a 0; a cut
episode is masked or scored as `train.truncated_episodes` says; and a real GRPOTrainer run takes its step on them."""

from __future__ import annotations

import functools
import math

import pytest

from evals.agent import make_environment
from evals.agent.episode import tool_schemas
from evals.harness.instance import Instance
from models.policy import SHIPPED_AGENT_BASE
from models.rollout import EpisodeRollout, episode_reward_value, play, render
from models.train import TrainJob, fit
from postgame.config import PolicySettings
from postgame.settings.agent import OUTCOMES, AgentSettings
from postgame.settings.train import TrainSettings
from tests.harness_fixtures import calc_instance, quick_settings

GOLD = "calc/ops.py\n<<<<<<< SEARCH\na // b\n=======\na / b\n>>>>>>> REPLACE\n"
BREAK_SUB = "calc/ops.py\n<<<<<<< SEARCH\na - b\n=======\na + b\n>>>>>>> REPLACE\n"
RUN = "<call>run_tests {}</call>"
VIEW = '<call>view {"path": "calc/ops.py"}</call>'
SUBMIT = "<call>submit {}</call>"


@pytest.fixture(scope="module")
def tok():
    from models.tokenizer import load_tokenizer

    return load_tokenizer(SHIPPED_AGENT_BASE)


@pytest.fixture
def tiny(tmp_path):
    return calc_instance(tmp_path)


def scripted(tok, turns: list[str]):
    """A sampler that 'samples' these assistant texts in order, each ended by the end token, as a model's would be."""
    queue = list(turns)

    def sample(ids: list[int]) -> list[int]:
        text = queue.pop(0) if queue else "nothing more to say"
        return list(tok(text, add_special_tokens=False)["input_ids"]) + [tok.eos_token_id]

    return sample


def episode(tiny, tok, turns, **agent):
    env = make_environment(AgentSettings(**agent), quick_settings(), repos_dir=tiny.repos_dir)
    return play(env, tiny.instance, scripted(tok, turns), tok, tools=tool_schemas(env)), tool_schemas(env)


def test_the_loss_sees_the_models_tokens_and_never_a_tool_result(tiny, tok):
    ep, tools = episode(tiny, tok, [RUN, GOLD, RUN, SUBMIT])
    assert ep.outcome == "submitted" and ep.reward == 1.0 and ep.turns == 4
    assert len(ep.env_mask) == len(ep.completion_ids)
    learned = tok.decode([t for t, m in zip(ep.completion_ids, ep.env_mask) if m])
    answered = tok.decode([t for t, m in zip(ep.completion_ids, ep.env_mask) if not m])
    assert learned == tok.eos_token.join([RUN, GOLD, RUN, SUBMIT]) + tok.eos_token
    assert "visible tests: 3 passed" in answered and "visible tests" not in learned
    # the sequence trained on is the conversation the chat template renders: the policy saw what the loss scores
    whole = tok.decode(ep.prompt_ids + ep.completion_ids)
    assert render(tok, ep.messages, tools, generation=False).startswith(whole)


def test_a_turn_that_would_overflow_the_context_window_ends_the_episode_cut(tiny, tok):
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tiny.repos_dir)
    tools = tool_schemas(env)
    ep = play(env, tiny.instance, scripted(tok, [VIEW] * 20), tok, tools=tools, max_len=900, max_new_tokens=128)
    assert ep.context_full and ep.outcome == "budget_exhausted" and ep.truncated
    assert len(ep.prompt_ids) + len(ep.completion_ids) + 128 > 900 >= len(ep.prompt_ids) + len(ep.completion_ids)


def test_an_infrastructure_error_is_out_of_the_loss_never_a_zero(tiny, tok):
    broken = Instance.model_validate({**tiny.instance.model_dump(), "base_commit": "0" * 40})
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tiny.repos_dir)
    ep = play(env, broken, scripted(tok, [SUBMIT]), tok, tools=tool_schemas(env))
    assert ep.outcome == "infra_error" and ep.reward is None
    assert episode_reward_value(ep, breakage_penalty=0.5, truncated="score") is None
    assert ep.completion_ids and not any(ep.env_mask)  # a token for TRL to pad, none for the loss


def test_a_cut_episode_is_masked_or_scored_as_the_setting_says(tiny, tok):
    ep, _ = episode(tiny, tok, [VIEW, VIEW], max_steps=2)
    assert ep.outcome == "budget_exhausted" and ep.reward == 0.0
    assert episode_reward_value(ep, breakage_penalty=0.5, truncated="mask") is None
    assert episode_reward_value(ep, breakage_penalty=0.5, truncated="score") == 0.0


def test_a_submitted_patch_that_breaks_a_passing_test_earns_less_than_one_that_changes_nothing(tiny, tok):
    broke, _ = episode(tiny, tok, [BREAK_SUB, SUBMIT], review_on_submit=False)
    nothing, _ = episode(tiny, tok, [SUBMIT])
    assert broke.p2p_broken == 1 and nothing.p2p_broken == 0
    assert episode_reward_value(broke, breakage_penalty=0.5, truncated="mask") == -0.5
    assert episode_reward_value(nothing, breakage_penalty=0.5, truncated="mask") == 0.0


def test_grpo_takes_its_step_on_episodes_in_the_environment(tiny, tmp_path):
    settings = TrainSettings(method="grpo", max_steps=1, batch_size=2, num_generations=2, grpo_learning_rate=2e-4)
    agent = AgentSettings(max_steps=4)
    env = make_environment(agent, quick_settings(), repos_dir=tiny.repos_dir)
    rollout = EpisodeRollout(
        {tiny.instance.instance_id: tiny.instance},
        functools.partial(make_environment, agent, quick_settings(), repos_dir=tiny.repos_dir),
        tools=tool_schemas(env),
        max_new_tokens=96,
    )
    row = {
        "example_id": "grpo:1",
        "instance_id": tiny.instance.instance_id,
        "kind": "grpo",
        "prompt": tiny.instance.problem_statement,
    }
    result = fit(
        TrainJob(
            method="grpo",
            policy_dir=SHIPPED_AGENT_BASE,
            rows=[row],
            work_dir=tmp_path / "work",
            settings=settings,
            policy=PolicySettings(max_new_tokens=96),
            rollout=rollout,
        )
    )
    assert result.steps == 1 and math.isfinite(result.train_loss)
    assert result.first_metrics["learning_rate"] == 2e-4 != settings.learning_rate  # GRPO's own rate, not SFT's
    assert len(rollout.episodes) == 2 and {ep.outcome for ep in rollout.episodes} <= set(OUTCOMES)
    assert all(ep.instance_id == tiny.instance.instance_id for ep in rollout.episodes)
    # what the trainer counts as generated is the model's tokens: the tool results were masked out of the loss
    assert result.usage.tokens_generated == sum(sum(ep.env_mask) for ep in rollout.episodes)
    assert result.seen == [["grpo:1"]]
    assert (tmp_path / "work" / "model" / "model.safetensors").exists()
