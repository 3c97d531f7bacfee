"""Suites that use subtests (`unittest`'s `self.subTest(...)`, pytest's `subtests` fixture) are graded right.

pytest >= 9 reports each subtest as another "call" report under the test's node id; the harness used to count that
as a test reported twice (tampering) and failed every test of the run, so a correct gold patch on a real repository
came out unresolved. Now: gold resolves, a patch that leaves one subtest failing does not (although pytest's own
report for a unittest test with a failed subtest says "passed"), and a forged second call report is still caught.
"""

from __future__ import annotations

from pathlib import Path

from evals.harness import Instance, evaluate
from tests.harness_fixtures import commit, diff_against, init_repo, quick_settings

BASE = {
    "flags/__init__.py": "",
    "flags/parse.py": "def parse_bool(text):\n    return {'true': True, 'false': False}[text]\n",
    "tests/__init__.py": "",
    "tests/test_parse.py": (
        "import unittest\n\nfrom flags.parse import parse_bool\n\n\n"
        "class ParseBoolTest(unittest.TestCase):\n"
        "    def test_lowercase(self):\n"
        "        for text, want in [('true', True), ('false', False)]:\n"
        "            with self.subTest(text=text):\n"
        "                self.assertIs(parse_bool(text), want)\n"
    ),
}
GOLD = {
    "flags/parse.py": "def parse_bool(text):\n    return {'true': True, 'yes': True, 'false': False, 'no': False}"
    "[text.lower()]\n"
}
HALF = {"flags/parse.py": "def parse_bool(text):\n    return {'true': True, 'false': False}[text.lower()]\n"}
TESTS = {
    "tests/test_parse.py": BASE["tests/test_parse.py"]
    + (
        "\n    def test_any_case_and_words(self):\n"
        "        for text, want in [('True', True), ('FALSE', False), ('yes', True), ('No', False)]:\n"
        "            with self.subTest(text=text):\n"
        "                self.assertIs(parse_bool(text), want)\n"
        "\n\ndef test_words_fixture(subtests):\n"
        "    for text, want in [('Yes', True), ('no', False)]:\n"
        "        with subtests.test(msg='word', text=text):\n"
        "            assert parse_bool(text) is want\n"
    ),
}
F2P = ["tests/test_parse.py::ParseBoolTest::test_any_case_and_words", "tests/test_parse.py::test_words_fixture"]
P2P = ["tests/test_parse.py::ParseBoolTest::test_lowercase"]

# Code under test that hands pytest a second, "passed" call report for the running test (not a subtest report).
FORGE_CALL = """
import gc, os
from _pytest.reports import TestReport


def _forge():
    nodeid = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    for obj in gc.get_objects():
        if type(obj).__name__ == "Config" and hasattr(obj, "pluginmanager"):
            report = TestReport(nodeid, ("tests/test_parse.py", 0, nodeid), {}, "passed", None, "call")
            obj.hook.pytest_runtest_logreport(report=report)
            return
"""


def _instance(root: Path) -> Instance:
    repo = root / "repos" / "acme__flags"
    base_commit = init_repo(repo, BASE)
    commit(repo, {**GOLD, **TESTS}, "the future: parse_bool takes any case and yes/no")
    return Instance(
        instance_id="acme__flags-1",
        repo="acme/flags",
        base_commit=base_commit,
        patch=diff_against(BASE, GOLD),
        test_patch=diff_against(BASE, TESTS),
        FAIL_TO_PASS=F2P,
        PASS_TO_PASS=P2P,
    )


def test_gold_resolves_and_a_patch_leaving_a_subtest_failing_does_not(tmp_path):
    inst = _instance(tmp_path)
    repos = tmp_path / "repos"
    gold = evaluate(inst, inst.patch, repos_dir=repos, settings=quick_settings())
    assert gold.status == "resolved" and gold.reward == 1.0, gold.log
    assert not gold.tampering

    half = evaluate(inst, diff_against(BASE, HALF), repos_dir=repos, settings=quick_settings())
    assert half.status == "unresolved" and not half.tampering and half.error is None, half.log
    assert set(half.tests_status["FAIL_TO_PASS"]["failure"]) == set(F2P)  # 'yes'/'No' still fail in both
    assert half.tests_status["PASS_TO_PASS"]["success"] == P2P
    assert "failed subtests of tests/test_parse.py::ParseBoolTest::test_any_case_and_words" in half.log


def test_a_forged_second_call_report_is_still_tampering(tmp_path):
    inst = _instance(tmp_path)
    code = GOLD["flags/parse.py"].replace("def parse_bool(text):\n", "def parse_bool(text):\n    _forge()\n")
    forged = diff_against(BASE, {"flags/parse.py": FORGE_CALL + "\n\n" + code})
    result = evaluate(inst, forged, repos_dir=tmp_path / "repos", settings=quick_settings())
    assert result.status == "unresolved" and result.reward == 0.0 and result.error is None, result.log
    assert any("reported twice" in t for t in result.tampering), result.tampering
