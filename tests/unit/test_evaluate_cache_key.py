"""The evaluation cache key changes with what the visible tests show (the cut's code digest): scores cached under an
earlier cut of the FAIL_TO_PASS tests are never compared with scores made under this one."""

from __future__ import annotations

import pytest

from evals.agent import visible
from models.evaluate import cache_key
from tests.support import make_config

RECORDS = [{"instance_id": "p__p-1", "base_commit": "abc", "environment_sha256": "e1"}]


@pytest.mark.parametrize(
    "agent, visible_tests, keyed",
    [(True, False, True), (False, True, True), (False, False, False)],
)
def test_the_cut_of_the_visible_tests_is_in_the_key_where_they_run(tmp_path, monkeypatch, agent, visible_tests, keyed):
    cfg = make_config(tmp_path)
    cfg = cfg.model_copy(
        update={
            "agent": cfg.agent.model_copy(update={"enabled": agent}),
            "scaffold": cfg.scaffold.model_copy(update={"visible_tests": visible_tests}),
        }
    )
    before = cache_key(cfg, "indomain", RECORDS)
    monkeypatch.setattr(visible, "cut_digest", lambda: "another cut")
    assert (cache_key(cfg, "indomain", RECORDS) != before) is keyed


def _another_first_observation(task: str, tests: str, tools: str, limit: int) -> str:
    return task + "\n\nVisible tests: " + tests  # the layout before session 21: the task first


@pytest.mark.parametrize("agent, keyed", [(True, True), (False, False)])
def test_the_layout_of_the_observations_is_in_the_key_of_episodes(tmp_path, monkeypatch, agent, keyed):
    from evals.agent import env

    cfg = make_config(tmp_path)
    cfg = cfg.model_copy(update={"agent": cfg.agent.model_copy(update={"enabled": agent})})
    before = cache_key(cfg, "indomain", RECORDS)
    monkeypatch.setattr(env, "first_observation", _another_first_observation)
    assert (cache_key(cfg, "indomain", RECORDS) != before) is keyed


@pytest.mark.parametrize(
    "name", ["SYSTEM_PROMPT", "PROMPT_TEMPLATE", "ANSWER_FORMAT", "ORACLE_TEMPLATE", "ORACLE_ANSWER_FORMAT"]
)
def test_every_prompt_text_is_in_the_key(tmp_path, monkeypatch, name):
    """The oracle window's template is what the default world's prompts use: a change to it regrades."""
    from evals import prompts

    cfg = make_config(tmp_path)
    before = cache_key(cfg, "indomain", RECORDS)
    monkeypatch.setattr(prompts, name, getattr(prompts, name) + "\nAnother line.")
    assert cache_key(cfg, "indomain", RECORDS) != before
