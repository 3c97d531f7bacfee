"""The tests an agent sees: every FAIL_TO_PASS test cut out, the rest kept; a test that cannot be cut cleanly hides
its whole file (never a leak)."""

from evals.agent.visible import strip_tests, visible_tests

SUITE = """import pytest


def test_keep():
    assert 1


@pytest.mark.parametrize("x", [1, 2])
def test_hidden(x):
    assert x


class TestThing:
    def test_kept_method(self):
        assert 1

    def test_hidden_method(self):
        assert 0
"""


def test_fail_to_pass_functions_and_methods_are_cut_with_their_decorators():
    (vf,) = visible_tests(
        {"tests/test_a.py": SUITE},
        ["tests/test_a.py::test_hidden[1]", "tests/test_a.py::TestThing::test_hidden_method"],
    )
    assert vf.text is not None
    assert "test_hidden" not in vf.text and "parametrize" not in vf.text
    assert "def test_keep" in vf.text and "def test_kept_method" in vf.text
    assert vf.removed == ("TestThing::test_hidden_method", "test_hidden")


def test_a_test_that_is_not_a_def_hides_the_whole_file():
    vf = strip_tests("tests/test_a.py", SUITE, {("test_generated",)})
    assert vf.text is None


def test_a_class_left_empty_hides_the_whole_file():
    text = "class TestOnly:\n    def test_x(self):\n        assert 0\n"
    assert strip_tests("tests/test_b.py", text, {("TestOnly", "test_x")}).text is None


def test_a_whole_file_id_hides_the_file():
    assert strip_tests("tests/test_c.py", SUITE, {()}).text is None


def test_files_without_a_fail_to_pass_test_are_not_touched():
    assert visible_tests({"tests/test_a.py": SUITE}, ["tests/test_other.py::test_x"]) == []
