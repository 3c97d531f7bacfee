"""The issue's own reproduction (evals/agent/repro.py): read from the statement, run in the real sandbox over a
candidate's tree, and used by the scaffold to prefer the candidate edit that makes it behave as the issue says."""

from __future__ import annotations

import json
import random
import sys

import pytest

from evals.agent import make_environment
from evals.agent.repro import Claim, needs_tests, repro_argv, reproduced, reproduction
from evals.factory.statements import Failure, write_statement
from postgame.settings.agent import AgentSettings
from tests.harness_fixtures import calc_instance, quick_settings

CALC_ISSUE = """`divide` returns the wrong result

To reproduce:

```python
from calc.ops import add, divide

half = add(3, 4)
print(divide(half, 2))
```

`divide(half, 2)` returns `3`, but I expected `3.5`.

Also: `divide(1, 0)` should raise `ZeroDivisionError`, but it returns without an error.
"""
GOLD = {"path": "calc/ops.py", "search": "a // b", "replace": "a / b"}
ROUNDS = {"path": "calc/ops.py", "search": "a // b", "replace": "round(a / b)"}  # applies, passes visible, still 4
BREAK_SUB = {"path": "calc/ops.py", "search": "a - b", "replace": "a + b"}


def test_every_sentence_the_factory_writes_is_read_back_as_its_claim():
    # The statement writer's own templates (each rng choice), not hand-written copies of them.
    failures = [
        (Failure("t::a", "wrong_value", ["f(1)"], "f(1)", "2", "3"), Claim("f(1)", "equals", "3")),
        (Failure("t::b", "mismatch", ["g()"], "g()", "", "[1, 2]"), Claim("g()", "equals", "[1, 2]")),
        (Failure("t::c", "compare", ["h()"], "h()", "5", "4", op="<="), Claim("h()", "compare", "4", "<=")),
        (Failure("t::d", "raised", ["k(0)"], "k(0)", "ValueError: bad", "7"), Claim("k(0)", "equals", "7")),
        (Failure("t::e", "raised", ["m()"], "m()", "KeyError: 'x'"), Claim("m()", "works", "KeyError")),
        (
            Failure("t::f", "did_not_raise", ["n(-1)"], "n(-1)", "", "ValueError"),
            Claim("n(-1)", "raises", "ValueError"),
        ),
        (Failure("t::g", "falsy", ["p()"], "p()", "False"), Claim("p()", "true")),
        (Failure("t::h", "truthy", ["q()"], "q()", "True"), Claim("q()", "false")),
    ]
    for failure, claim in failures:
        for seed in range(12):  # every phrasing the writer draws from
            text = write_statement([failure], package="pkg", imports=[], rng=random.Random(seed))
            repro = reproduction(text)
            assert repro is not None and repro.claims == (claim,), text


def test_the_setup_drops_the_lines_that_only_show_a_claimed_expression():
    repro = reproduction(CALC_ISSUE)
    assert repro is not None
    # print(divide(half, 2)) is the claim's own expression: the check evaluates it once, after the setup
    assert repro.setup == "from calc.ops import add, divide\n\nhalf = add(3, 4)\n"
    assert repro.claims == (
        Claim("divide(half, 2)", "equals", "3.5"),
        Claim("divide(1, 0)", "raises", "ZeroDivisionError"),
    )


def test_a_statement_with_nothing_checkable_states_no_reproduction():
    assert reproduction("divide() floors: 7/2 gives 3") is None  # a human's free-form issue
    assert reproduction("```python\ndivide(7, 2)\n```\nIt looks wrong to me.") is None  # code, no expectation
    cut = "```python\nx = f()\n```\n\n`f()` returns `[1, 2, ...`, but I expected `[1, 2, 3, 4, 5, 6, 7, ...`.\n"
    assert reproduction(cut) is None  # values cut short ("...") are not checked


def test_only_the_runners_last_verdict_line_counts():
    assert reproduced('noise\n{"reproduced": true, "why": ""}\n') is True
    assert reproduced('{"reproduced": true}\n{"reproduced": false, "why": "f(1)"}\n') is False
    assert reproduced('{"reproduced": null, "why": "no claim could be checked"}') is None
    assert reproduced("Traceback (most recent call last):\nMemoryError\n") is None  # the runner died: unknown


@pytest.fixture
def calc(tmp_path):
    return calc_instance(tmp_path, problem_statement=CALC_ISSUE)


def test_the_reproduction_runs_in_the_sandbox_fails_at_base_and_holds_with_the_fix(calc):
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=calc.repos_dir)
    env.reset(calc.instance)
    assert env.try_edits([], reproduce=True) is False  # the copy as it is: divide(7, 2) == 3
    assert env.try_edits([GOLD], reproduce=True) is True  # the issue's example behaves, the visible tests pass
    assert env.try_edits([ROUNDS], reproduce=True) is False  # the visible tests pass, the example does not
    assert env.try_edits([ROUNDS]) is True  # ... which the visible tests alone cannot tell
    assert env.try_edits([GOLD, BREAK_SUB], reproduce=True) is False  # the example behaves, test_sub breaks
    assert env._ws.diff() == "" and env._steps == 0  # nothing written, no step spent
    checker = env._checker
    runs = len(checker.repros)
    assert env.try_edits([GOLD], reproduce=True) is True and len(checker.repros) == runs  # a patch runs once
    env.edit(**GOLD)
    assert env.try_edits([], reproduce=True) is True  # the copy as it is now


def test_a_statement_that_states_nothing_checkable_leaves_the_visible_tests_rule(tiny_plain):
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tiny_plain.repos_dir)
    env.reset(tiny_plain.instance)
    assert env.try_edits([GOLD], reproduce=True) is None and env.try_edits([GOLD]) is True


@pytest.fixture
def tiny_plain(tmp_path):
    return calc_instance(tmp_path)


def test_the_runner_seeds_the_example_with_the_visible_test_modules_definitions(calc, tmp_path):
    # An issue's example may call the helper that builds its data (`roads()`): it is the test module's.
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def data():\n    return [3, 1, 2]\n")
    repro = reproduction("```python\nxs = data()\n```\n\n`sorted(xs)` returns `[]`, but I expected `[1, 2, 3]`.\n")
    import subprocess

    assert needs_tests(repro) and not needs_tests(reproduction(CALC_ISSUE))  # only an example that needs them
    assert json.loads(repro_argv(sys.executable, reproduction(CALC_ISSUE), ["tests/test_x.py"])[-1])["tests"] == []
    argv = repro_argv(sys.executable, repro, ["tests/test_x.py"])
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60).stdout
    assert reproduced(out) is True and json.loads(out.strip().splitlines()[-1])["why"] == ""


def test_the_scaffold_takes_the_candidate_that_makes_the_example_behave():
    from models.agent import choose_turn, fixing_turn

    shown = "calc/ops.py\n    return a // b\n"

    def edit(replace):
        args = {"path": "calc/ops.py", "search": "a // b", "replace": replace}
        return {"role": "assistant", "tool_calls": [{"function": {"name": "edit", "arguments": args}}]}

    submit = {"role": "assistant", "tool_calls": [{"function": {"name": "submit", "arguments": {}}}]}
    rounds, fixes, junk = edit("round(a / b)"), edit("a / b"), edit("a // b")  # junk changes nothing

    def trial(edits, reproduce=False):
        if not reproduce:
            return True  # every edit keeps the visible tests passing
        return bool(edits) and edits[0]["replace"] == "a / b"

    assert choose_turn([rounds, fixes], shown, trial=trial) is rounds  # the visible tests alone: the likeliest
    assert fixing_turn([rounds, fixes], shown, None, trial) is fixes
    assert fixing_turn([submit, rounds, fixes], shown, None, trial) is fixes  # ahead of a likelier submit
    assert fixing_turn([submit, rounds], shown, None, trial) is None  # none does: the rule above decides
    assert fixing_turn([junk], shown, None, lambda edits, reproduce=False: True) is None  # unusable never
    assert fixing_turn([fixes], shown, None, lambda edits, reproduce=False: None) is None  # nothing checkable


def test_an_agent_draws_more_candidates_only_while_none_makes_the_example_behave(calc, monkeypatch):
    # The shipped agent base reads the prompt; its completions are scripted: beams that do not fix the example,
    # draws of which one does. Checked: fails when `act` skips the draws or takes a drawn turn the trial refused.
    from evals.agent.episode import run_episode
    from models.agent import ChatPolicy
    from models.policy import SHIPPED_AGENT_BASE
    from postgame.config import PolicySettings

    block = "calc/ops.py\n<<<<<<< SEARCH\n    return a // b\n=======\n    return {}\n>>>>>>> REPLACE\n"
    beams, drawn = [block.format("round(a / b)")] * 2, [block.format("a // b + 1"), block.format("a / b")]
    asked: list[tuple[int, bool]] = []

    def complete(self, prompt, seed, n, greedy):
        asked.append((n, greedy))
        if len(asked) > 2:
            return ["<call>submit {}</call>"] * n, 10, 10
        return (beams if greedy else drawn), 10, 10

    monkeypatch.setattr(ChatPolicy, "_complete", complete)
    shown = "calc/ops.py\n```python\ndef divide(a, b):\n    return a // b\n```\n"
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=calc.repos_dir)
    policy = ChatPolicy(
        SHIPPED_AGENT_BASE, settings=PolicySettings(), candidates=2, verify=True, reproduce=True, draws=2
    )
    traj = run_episode(env, calc.instance, policy, context=CALC_ISSUE + shown)
    assert asked[:2] == [(2, True), (2, False)]  # the beams, then the draws: neither beam makes divide(7, 2) 3.5
    assert traj.result.outcome == "submitted" and traj.result.reward == 1.0 and "a / b" in traj.result.patch
    assert asked[2:] == [(2, True)]  # the copy behaves now: no more draws

    asked.clear()
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=calc.repos_dir)
    policy = ChatPolicy(SHIPPED_AGENT_BASE, settings=PolicySettings(), candidates=2, verify=True, reproduce=True)
    traj = run_episode(env, calc.instance, policy, context=CALC_ISSUE + shown)
    assert asked[0] == (2, True) and (2, False) not in asked  # no draws asked for: the beams' rule decides
    assert "round(a / b)" in traj.result.patch and traj.result.reward == 0.0
