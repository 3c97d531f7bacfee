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


def test_the_scaffold_submits_the_likeliest_edit_that_keeps_the_visible_tests_passing(tmp_path):
    """With the task's visible tests: an edit that breaks one is passed over for the next; when every edit breaks
    one, no change is submitted (ABSTAIN); prose is submitted as it is (nothing to run). Real sandboxed runs on the
    harness's example task; the hidden FAIL_TO_PASS tests never run (they are cut from the tree)."""
    import json
    from pathlib import Path

    from evals.harness.examples.build import build_repos
    from evals.harness.instance import Instance
    from evals.prompts import extract_patch
    from models.answer import ABSTAIN, pick_verified
    from postgame.settings.harness import HarnessSettings

    build_repos(tmp_path / "repos")
    lines = Path("evals/harness/examples/instances.jsonl").read_text().splitlines()
    task = Instance.model_validate(json.loads(lines[0]))  # acme__textkit-1: slugify
    old = '    return re.sub(r"[^a-z0-9]", sep, text)\n'
    prompt = f"textkit/slug.py\n```python\n{old}```\n"

    def block(new: str) -> Generation:
        return Generation(f"textkit/slug.py\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n", 10, 5, 1.0)

    breaks = block('    return re.sub(r"[^a-z0-9]+", sep, text).upper()\n')  # breaks the visible test_single_word
    gold = block('    return re.sub(r"[^a-z0-9]+", sep, text).strip(sep)\n')
    harness = HarnessSettings()
    chosen = pick_verified([breaks, gold], prompt, task, harness, tmp_path / "repos")
    assert chosen.text == gold.text and chosen.completion_tokens == 10
    assert chosen.latency_ms > 2.0  # the test runs are part of the answer's time
    assert pick_verified([breaks], prompt, task, harness, tmp_path / "repos").text == ABSTAIN
    assert extract_patch(ABSTAIN) == ""
    prose = Generation("no idea", 10, 2, 1.0)
    assert pick_verified([prose], prompt, task, harness, tmp_path / "repos").text == "no idea"
    # the check cannot run (no repository): the infrastructure's fault, so the answer goes unchecked, not abstained
    assert pick_verified([breaks, gold], prompt, task, harness, tmp_path / "nowhere").text == breaks.text


def test_sampled_answers_are_drawn_in_one_batch_per_prompt_and_follow_their_seed():
    from models.answer import candidates

    policy = Policy(SHIPPED_BASE, name="base", version="base", settings=PolicySettings(max_new_tokens=16))
    prompts = [PROMPT + "Answer with one block.\n", "def add(a, b):\n    return a - b\n"]
    first = candidates(policy, prompts, 4, seed=3)
    assert [len(pool) for pool in first] == [4, 4]
    assert [[g.text for g in pool] for pool in first] == [
        [g.text for g in pool] for pool in candidates(policy, prompts, 4, seed=3)
    ]
    other = candidates(policy, prompts, 4, seed=4)
    assert [[g.text for g in pool] for pool in other] != [[g.text for g in pool] for pool in first]
    assert len({g.text for g in first[0]}) > 1  # independent draws, not one answer four times


class _Answers:
    """A stand-in for the model: the same completion for every prompt (the scaffold around it is what is tested)."""

    settings = PolicySettings()

    def __init__(self, text: str):
        self.text = text

    def generate(self, prompts, seed=None, greedy=False):
        return [Generation(self.text, 10, 8, 1.0) for _ in prompts]


def test_an_answer_naming_a_half_remembered_path_is_pointed_at_the_file_shown():
    stray = FIX.replace("pkg/mod.py\n", "mod.py\n")
    (answer,) = submit(_Answers(stray), [PROMPT], ScaffoldSettings(check_edits=False))
    assert answer.text == FIX
    (kept,) = submit(_Answers(stray), [PROMPT], ScaffoldSettings(check_edits=False, repoint_paths=False))
    assert kept.text == stray
    elsewhere = FIX.replace("return x - 1\n=", "return y - 1\n=").replace("pkg/mod.py\n", "mod.py\n")
    assert submit(_Answers(elsewhere), [PROMPT], ScaffoldSettings(check_edits=False))[0].text == elsewhere
