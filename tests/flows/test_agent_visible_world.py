"""The agent's visible tests on built tasks: run at base in the sandbox, they collect every PASS_TO_PASS test under
the id grading knows it by, and no FAIL_TO_PASS one — parametrised tests losing only their failing cases
(evals/agent/visible.py), where an earlier cut hid 155 PASS_TO_PASS tests of the seed-0 world's in-domain tasks."""

from __future__ import annotations

from evals.agent.workspace import open_workspace
from evals.factory.instances import load_split


def test_visible_runs_show_every_passing_test_and_no_failing_one(small_world):
    cases_cut = 0
    for split in ("train", "indomain", "eval", "holdout"):
        for inst in load_split(small_world, split):
            ws = open_workspace(inst, repos_dir=None, settings=small_world.eval)
            try:
                run = ws.run_tests(None, small_world.eval)
                hidden = list(ws.hidden)
            finally:
                ws.close()
            collected = set(run.statuses)
            assert not collected & set(inst.FAIL_TO_PASS), inst.instance_id
            assert set(inst.PASS_TO_PASS) <= collected, inst.instance_id
            assert all(run.statuses[t] == "PASSED" for t in inst.PASS_TO_PASS), inst.instance_id
            cases_cut += sum("[" in h for h in hidden)
    assert cases_cut > 0  # the world has tests only some of whose cases fail: the cut took those cases alone
