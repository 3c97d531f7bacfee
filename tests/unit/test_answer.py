"""The scaffold's check of an answer (models/answer.py): pure on text, then on the shipped base."""

from __future__ import annotations

from models.answer import checked_edit, pick, submit
from models.policy import SHIPPED_BASE, Generation, Policy
from postgame.config import PolicySettings
from postgame.settings.scaffold import ScaffoldSettings

PROMPT = "pkg/mod.py (lines 1-3)\n```python\ndef f(x):\n    return x - 1\n```\n"
FIX = "pkg/mod.py\n<<<<<<< SEARCH\n    return x - 1\n=======\n    return x + 1\n>>>>>>> REPLACE\n"


def test_only_edits_that_apply_to_the_code_shown_and_change_it_pass():
    assert checked_edit(FIX, PROMPT)
    assert not checked_edit(FIX.replace("x + 1", "x - 1"), PROMPT)  # changes nothing
    assert not checked_edit(FIX.replace("return x - 1\n=", "return y - 1\n="), PROMPT)  # SEARCH not in the code
    assert not checked_edit(FIX.replace("    return x - 1\n=", "   \n="), PROMPT)  # blank SEARCH
    assert not checked_edit("just prose", PROMPT) and not checked_edit(FIX.replace(">>>>>>> REPLACE\n", ""), PROMPT)


def test_the_likeliest_passing_candidate_is_submitted_and_all_of_them_are_paid_for():
    noop = Generation(FIX.replace("x + 1", "x - 1"), 10, 7, 2.0)
    good = Generation(FIX, 10, 8, 3.0)
    other = Generation(FIX.replace("x + 1", "x * 2"), 10, 9, 4.0)
    chosen = pick([noop, good, other], PROMPT)
    assert chosen.text == FIX and chosen.completion_tokens == 24 and chosen.latency_ms == 9.0
    assert pick([noop], PROMPT).text == noop.text  # none passes: the first, as generated


def test_checked_greedy_answers_are_deterministic_and_pass_whenever_a_beam_does():
    from models.answer import _beams

    policy = Policy(SHIPPED_BASE, name="base", version="base", settings=PolicySettings(max_new_tokens=64))
    prompts = [PROMPT + "Answer with one block.\n", "def add(a, b):\n    return a - b\n"]
    scaffold = ScaffoldSettings(candidates=4)
    first = submit(policy, prompts, scaffold, greedy=True)
    assert [a.text for a in first] == [a.text for a in submit(policy, prompts, scaffold, greedy=True)]
    for prompt, answer in zip(prompts, first):
        beams = _beams(policy, prompt, 4)
        passing = [b.text for b in beams if checked_edit(b.text, prompt)]
        assert answer.text == (passing[0] if passing else beams[0].text)
    plain = submit(policy, prompts, ScaffoldSettings(check_edits=False), greedy=True)
    assert [a.text for a in plain] == [g.text for g in policy.generate(prompts, greedy=True)]
