"""Scripted episodes in the real sandbox, graded by the real harness (the calc instance: `divide` floors; the hidden
FAIL_TO_PASS test is test_divide, the visible tests add, sub and divide_exact)."""

from __future__ import annotations

import json
import os
import re
import time

import pytest

from evals.agent import make_environment
from evals.agent.batch import Script, run_episodes
from evals.agent.env import tests_observation as observation_of  # not collected as a test
from evals.agent.episode import ScriptedPolicy, run_episode
from postgame.settings.agent import AgentSettings, parse_tools
from postgame.settings.runner import RunnerSettings
from tests.harness_fixtures import calc_instance, quick_settings

GOLD = {"tool": "edit", "args": {"path": "calc/ops.py", "search": "a // b", "replace": "a / b"}}
BREAK_SUB = {"tool": "edit", "args": {"path": "calc/ops.py", "search": "a - b", "replace": "a + b"}}
REVERT_SUB = {
    "tool": "edit",
    "args": {
        "path": "calc/ops.py",
        "search": "return a + b\n\n\ndef divide",
        "replace": "return a - b\n\n\ndef divide",
    },
}
HANG = {  # add never returns: a run of the visible test_add hangs
    "tool": "edit",
    "args": {
        "path": "calc/ops.py",
        "search": "def add(a, b):\n",
        "replace": "def add(a, b):\n    while True:\n        pass\n",
    },
}
RUN = {"tool": "run_tests", "args": {}}
SUBMIT = {"tool": "submit", "args": {}}


@pytest.fixture
def tiny(tmp_path):
    return calc_instance(tmp_path)


def episode(tiny, calls, **agent):
    env = make_environment(AgentSettings(**agent), quick_settings(), repos_dir=tiny.repos_dir)
    return run_episode(env, tiny.instance, ScriptedPolicy(calls))


def tool_results(traj):
    return [m["content"] for m in traj.messages if m["role"] == "tool"]


def test_gold_edit_then_submit_is_resolved(tiny):
    traj = episode(tiny, [GOLD, SUBMIT])
    assert traj.result.outcome == "submitted" and traj.result.reward == 1.0 and traj.result.resolved
    assert "a / b" in traj.result.patch and "tests/" not in traj.result.patch


def test_a_broken_visible_test_shows_in_the_next_run_then_revert_and_gold_resolve(tiny):
    traj = episode(tiny, [RUN, BREAK_SUB, RUN, REVERT_SUB, GOLD, RUN, SUBMIT])
    first, broken, fixed = (o for o in tool_results(traj) if o.startswith("visible tests"))
    assert first.startswith("visible tests: 3 passed")
    assert "1 failed" in broken and "FAILED tests/test_ops.py::test_sub" in broken and "E " in broken
    assert fixed.startswith("visible tests: 3 passed")
    assert traj.result.outcome == "submitted" and traj.result.reward == 1.0


def test_what_a_test_run_shows_has_nothing_of_the_wall_clock(tiny):
    # guards: a run's duration in the observation ("(0.4s)", pytest's "in 0.12s"): the same weights then played 5 of
    # 70 greedy dev episodes differently from one evaluation to the next (session 33), and the gate pairs the
    # champion's episodes with a candidate's played at another time, under another load
    traj = episode(tiny, [RUN, BREAK_SUB, RUN, SUBMIT])
    runs = [o for o in tool_results(traj) if o.startswith("visible tests")]
    assert len(runs) == 2 and not any(re.search(r"\d\.\d+ ?s\b", o) for o in runs), runs
    collected_nothing = "---- test output ----\nE   ImportError: x\n==================== 1 error in 0.12s ===="
    shown = observation_of({}, collected_nothing)
    assert "1 error" in shown and "0.12" not in shown


def test_submitting_a_change_that_breaks_a_passing_test_is_not_resolved(tiny):
    traj = episode(tiny, [GOLD, BREAK_SUB, SUBMIT], review_on_submit=False)
    assert traj.result.outcome == "submitted" and traj.result.reward == 0.0
    assert traj.result.p2p_broken == 1


def test_a_submit_that_breaks_a_visible_test_is_refused_once_then_submits_no_change(tiny):
    traj = episode(tiny, [GOLD, BREAK_SUB, SUBMIT, SUBMIT])
    refused = tool_results(traj)[2]
    assert refused.startswith("Submit refused: 1 visible test(s)") and "tests/test_ops.py::test_sub" in refused
    assert "Submitted no change" in tool_results(traj)[3]
    assert traj.result.outcome == "submitted" and traj.result.patch == ""  # the broken change is not what is graded
    assert traj.result.reward == 0.0 and traj.result.p2p_broken == 0


def test_the_review_runs_the_tests_the_task_gave_not_the_agents_edits_of_them(tiny):
    break_test = {"tool": "edit", "args": {"path": "tests/test_ops.py", "search": "== 5", "replace": "== 6"}}
    weaken = {
        "tool": "edit",
        "args": {"path": "tests/test_ops.py", "search": "def test_sub():", "replace": "def _sub():"},
    }
    fixed_but_test_broken = episode(tiny, [GOLD, break_test, SUBMIT])
    assert fixed_but_test_broken.result.outcome == "submitted" and fixed_but_test_broken.result.reward == 1.0
    hidden_breakage = episode(tiny, [BREAK_SUB, weaken, SUBMIT, SUBMIT])
    assert tool_results(hidden_breakage)[2].startswith("Submit refused")  # test_sub still runs in the review
    assert hidden_breakage.result.patch == "" and hidden_breakage.result.p2p_broken == 0


def test_a_refused_change_is_not_graded_when_the_budget_ends_the_episode(tiny):
    traj = episode(tiny, [BREAK_SUB, SUBMIT], max_steps=2, grade_unsubmitted=True)
    assert tool_results(traj)[1].startswith("Submit refused") and traj.result.outcome == "budget_exhausted"
    assert traj.result.patch == "" and traj.result.p2p_broken == 0  # autosubmit grades nothing, not the broken change


def test_after_a_refused_submit_the_repaired_change_is_submitted_and_resolves(tiny):
    traj = episode(tiny, [BREAK_SUB, GOLD, SUBMIT, REVERT_SUB, SUBMIT])
    assert tool_results(traj)[2].startswith("Submit refused")
    assert traj.result.outcome == "submitted" and traj.result.reward == 1.0 and "a / b" in traj.result.patch


def test_the_hidden_test_is_not_in_the_agents_tree(tiny):
    traj = episode(
        tiny,
        [
            {"tool": "search", "args": {"pattern": "divide(7"}},
            {"tool": "view", "args": {"path": "tests/test_ops.py"}},
            SUBMIT,
        ],
    )
    search, view, _ = tool_results(traj)
    assert search.startswith("no line contains")
    assert "test_divide_exact" in view and "def test_divide(" not in view
    assert traj.result.hidden_tests == ["tests/test_ops.py::test_divide"]


def test_budget_exhausted(tiny):
    traj = episode(tiny, [RUN, RUN, RUN, SUBMIT], max_steps=3)
    assert traj.result.outcome == "budget_exhausted" and traj.result.reward == 0.0 and traj.result.steps == 3


def test_consecutive_invalid_calls_end_the_episode(tiny):
    calls = [
        {"tool": "nope", "args": {}},
        {"tool": "view", "args": {"path": "../../etc/passwd"}},
        {"tool": "view", "args": {"path": 7}},
        SUBMIT,
    ]
    traj = episode(tiny, calls, max_invalid_actions=3)
    assert traj.result.outcome == "invalid_actions" and traj.result.invalid_calls == 3
    unknown, unsafe, typed = tool_results(traj)
    assert "unknown tool 'nope'" in unknown and "unsafe path" in unsafe and "must be str" in typed


def test_arguments_that_are_not_json_are_an_invalid_call(tiny):
    traj = episode(tiny, [{"tool": "view", "args": "{not json"}, SUBMIT])
    assert "not JSON" in tool_results(traj)[0] and traj.result.outcome == "submitted"
    assert traj.result.invalid_calls == 1


def test_a_failed_edit_is_an_observation_not_an_invalid_call(tiny):
    traj = episode(
        tiny, [{"tool": "edit", "args": {"path": "calc/ops.py", "search": "no such", "replace": "x"}}, SUBMIT]
    )
    assert tool_results(traj)[0].startswith("edit failed") and traj.result.invalid_calls == 0


def test_a_hung_test_run_ends_the_episode_with_timeout(tiny):
    traj = episode(tiny, [HANG, RUN, SUBMIT], step_timeout_s=3)
    assert traj.result.outcome == "timeout" and traj.result.reward == 0.0
    assert "limit" in tool_results(traj)[-1]


def test_a_hung_review_on_submit_is_cut_at_the_episodes_limit_not_the_steps(tiny):
    start = time.monotonic()
    traj = episode(tiny, [HANG, SUBMIT, SUBMIT], step_timeout_s=120, episode_timeout_s=8)
    assert traj.result.outcome == "timeout" and traj.result.reward == 0.0
    assert time.monotonic() - start < 60  # the review's run was killed when the episode's 8 s were up, not at 120 s


def test_editing_or_deleting_tests_and_conftest_tricks_gain_nothing(tiny):
    force_pass = (
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
    )
    calls = [
        {"tool": "edit", "args": {"path": "conftest.py", "search": "", "replace": force_pass}},
        {
            "tool": "edit",
            "args": {"path": "tests/test_ops.py", "search": "assert add(2, 3) == 5", "replace": "assert True"},
        },
        {"tool": "edit", "args": {"path": "tests/test_new.py", "search": "", "replace": "def test_x(): pass\n"}},
        SUBMIT,
    ]
    traj = episode(tiny, calls)
    assert traj.result.outcome == "submitted" and traj.result.reward == 0.0
    assert "conftest" not in traj.result.patch and "tests/" not in traj.result.patch


def test_missing_repository_is_an_infrastructure_error_not_a_zero(tiny, tmp_path):
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tmp_path / "nowhere")
    traj = run_episode(env, tiny.instance, ScriptedPolicy([SUBMIT]))
    assert traj.result.outcome == "infra_error" and traj.result.reward is None


def test_trajectory_is_openai_chat_shape(tiny):
    traj = episode(tiny, [GOLD, SUBMIT])
    roles = [m["role"] for m in traj.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
    call = traj.messages[2]["tool_calls"][0]
    assert call["type"] == "function" and json.loads(call["function"]["arguments"])["path"] == "calc/ops.py"
    assert traj.messages[3]["tool_call_id"] == call["id"]


def test_the_first_observation_ends_with_the_task_as_the_agent_base_learned_to_read_it(tiny):
    """The oracle prompt ends where the answer starts; the first observation keeps it last, so the edit follows the
    code it fixes as in the base's training, and the agent base's synthetic trajectories open the same way."""
    import random

    from models.agent_base import TOOL_NAMES, AgentBaseSettings, trajectory
    from models.base_data import Example

    prompt = "Fix it.\n\ncalc/ops.py (lines 1-2)\n```python\ndef divide(a, b):\n    return a // b\n```\nThe fix goes in calc/ops.py.\n"
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tiny.repos_dir)
    first = env.reset(tiny.instance, context=prompt)
    env.close()
    assert first.startswith("Visible tests: ") and first.endswith(prompt)
    assert TOOL_NAMES == ", ".join(env.tool_names)
    gold = "calc/ops.py\n<<<<<<< SEARCH\n    return a // b\n=======\n    return a / b\n>>>>>>> REPLACE\n"
    messages, _ = trajectory(
        Example(prompt=prompt, completion=gold, kind="repair"), random.Random(0), AgentBaseSettings()
    )
    learned = messages[1]["content"]
    assert (
        learned.endswith(prompt)
        and learned.split("\n\n")[0].split(". Tools:")[1] == first.split("\n\n")[0].split(". Tools:")[1]
    )


def test_tool_schemas_render_from_the_methods(tiny):
    from evals.agent.episode import tool_schemas

    env = make_environment(AgentSettings(tools=parse_tools("all")), quick_settings())
    names = [s["function"]["name"] for s in tool_schemas(env)]
    assert names == ["list_files", "view", "search", "edit", "run_tests", "bash", "submit"]
    edit = next(s for s in tool_schemas(env) if s["function"]["name"] == "edit")["function"]
    assert edit["parameters"]["required"] == ["path", "search", "replace"] and edit["description"]
    assert "bash" not in make_environment(AgentSettings(), quick_settings()).tool_names


def test_a_batch_writes_trajectories_and_the_outcome_mix(tiny, tmp_path):
    report = run_episodes(
        [tiny.instance],
        Script((GOLD, SUBMIT)),
        agent=AgentSettings(),
        harness=quick_settings(),
        repos_dir=tiny.repos_dir,
        out_dir=tmp_path / "out",
        runner=RunnerSettings(kind="serial"),
    )
    assert report.resolved == 1 and report.outcomes["submitted"] == 1
    (line,) = (tmp_path / "out" / "trajectories.jsonl").read_text().splitlines()
    assert json.loads(line)["outcome"] == "submitted"
    assert json.loads((tmp_path / "out" / "report.json").read_text())["instances"]["acme__calc-1"]["resolved"]


def test_visible_runs_take_the_instances_test_options_src_layout(tmp_path):
    """A src layout needs the instance's own `-o pythonpath=src` (found on tomli: without it every visible run was a
    ModuleNotFoundError)."""
    from evals.harness.instance import Instance
    from tests.harness_fixtures import diff_against, init_repo

    base = {"src/sq/__init__.py": "def sq(x):\n    return x * 3\n\n\ndef one():\n    return 1\n"}
    tests = {
        "tests/test_sq.py": "from sq import one, sq\n\n\ndef test_sq():\n    assert sq(3) == 9\n\n\n"
        "def test_one():\n    assert one() == 1\n"
    }
    repo = tmp_path / "repos" / "acme__sq"
    commit = init_repo(repo, base)
    inst = Instance(
        instance_id="acme__sq-1",
        repo="acme/sq",
        base_commit=commit,
        problem_statement="sq(3) is 9",
        patch=diff_against(base, {"src/sq/__init__.py": base["src/sq/__init__.py"].replace("* 3", "* x")}),
        test_patch=diff_against(base, tests),
        FAIL_TO_PASS=["tests/test_sq.py::test_sq"],
        PASS_TO_PASS=["tests/test_sq.py::test_one"],
        test_cmd="python -m pytest -rA -o pythonpath=src tests/test_sq.py",
    )
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tmp_path / "repos")
    traj = run_episode(
        env,
        inst,
        ScriptedPolicy(
            [
                RUN,
                {"tool": "edit", "args": {"path": "src/sq/__init__.py", "search": "x * 3", "replace": "x * x"}},
                SUBMIT,
            ]
        ),
    )
    assert tool_results(traj)[0].startswith("visible tests: 1 passed")
    assert traj.result.reward == 1.0


def test_submitting_nothing_breaks_nothing(tiny):
    traj = episode(tiny, [SUBMIT])
    assert traj.result.outcome == "submitted" and traj.result.reward == 0.0 and traj.result.p2p_broken == 0


def test_try_edits_checks_a_candidates_edits_against_the_visible_tests_and_changes_nothing(tiny):
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tiny.repos_dir)
    env.reset(tiny.instance)
    assert env.try_edits([GOLD["args"]]) is True
    assert env.try_edits([BREAK_SUB["args"]]) is False  # test_sub, visible and passing at base, fails with it
    assert env.try_edits([GOLD["args"], BREAK_SUB["args"]]) is False  # edits are checked together, in order
    assert env.try_edits([{**GOLD["args"], "search": "not in the file"}]) is False
    assert env.try_edits([{**GOLD["args"], "path": "../outside.py"}]) is False
    assert env.try_edits([{"path": "calc/ops.py"}]) is False
    assert env._ws.diff() == "" and env._steps == 0  # nothing written, no step spent
    env.edit(**GOLD["args"])  # the trial takes the copy as it is now
    assert env.try_edits([BREAK_SUB["args"], REVERT_SUB["args"]]) is True
    env.submit()
    assert env.result().reward == 1.0 and env.try_edits([GOLD["args"]]) is None  # over: nothing to check


def test_a_tree_tried_then_run_then_reviewed_runs_its_visible_tests_once(tiny):
    # The scaffold's trial of an edit, the agent's run_tests after making it, and the review on submit all ask
    # the same question of the same tree: one sandboxed run answers all three (`Workspace.run_tests`' memo).
    env = make_environment(AgentSettings(), quick_settings(), repos_dir=tiny.repos_dir)
    env.reset(tiny.instance)
    assert env.try_edits([GOLD["args"]]) is True
    ws, checker = env._ws, env._checker
    assert checker.runs == 2  # the visible tests at base, then with the gold edit
    env.edit(**GOLD["args"])
    assert env.run_tests().startswith("visible tests: 3 passed")
    assert ws.runs == 0 and ws.reused == 1  # the agent's tree is the tried one: not run again
    env.submit()
    assert checker.runs == 2 and env.result().reward == 1.0  # the review's run was the trial's


def test_a_tree_that_changed_in_any_way_runs_its_tests_again(tiny):
    env = make_environment(AgentSettings(tools=parse_tools("all")), quick_settings(), repos_dir=tiny.repos_dir)
    env.reset(tiny.instance)
    ws = env._ws
    seen = {ws.digest()}
    assert env.run_tests().startswith("visible tests: 3 passed") and ws.runs == 1
    assert env.run_tests().startswith("visible tests: 3 passed") and (ws.runs, ws.reused) == (1, 1)
    changes = {  # what `bash` could do to the tree besides editing files
        "a fifo": lambda: os.mkfifo(ws.copy / "pipe"),  # never opened by the digest: opening one would block
        "an empty folder": lambda: (ws.copy / "empty").mkdir(),
        "an executable bit": lambda: (ws.copy / "calc" / "ops.py").chmod(0o755),
        "a symbolic link": lambda: (ws.copy / "link").symlink_to("calc/ops.py"),
    }
    for name, change in changes.items():
        change()
        digest = ws.digest()
        assert digest not in seen, name
        seen.add(digest)
    runs = ws.runs
    env.edit(**BREAK_SUB["args"])
    assert "1 failed" in env.run_tests() and ws.runs == runs + 1
    env.edit(path="tests/test_ops.py", search="def test_sub():", replace="def _sub():")  # the agent's own test edit
    assert env.run_tests().startswith("visible tests: 2 passed") and ws.runs == runs + 2
