"""The copy has no git history: code under test cannot read future commits (SWE-bench #465)."""

from evals.harness import evaluate
from tests.harness_fixtures import calc_instance, in_add, quick_settings

BODY = """
import os, subprocess
r = subprocess.run(["git", "log", "--all", "--oneline"], capture_output=True, text=True)
print("GITLOG", repr(r.stdout), "DOTGIT", os.path.exists(os.path.join(os.getcwd(), ".git")))
"""


def test_future_commits_are_invisible(tmp_path):
    tiny = calc_instance(tmp_path)
    result = evaluate(tiny.instance, in_add(tiny, BODY), repos_dir=tiny.repos_dir, settings=quick_settings())
    assert "GITLOG ''" in result.log and "DOTGIT False" in result.log
    assert "the future" not in result.log
