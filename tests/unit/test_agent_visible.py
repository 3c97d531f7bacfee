"""The tests an agent sees: every FAIL_TO_PASS test cut out, the rest kept; a test that cannot be cut cleanly hides
its whole file (never a leak); a parametrised test loses only its FAIL_TO_PASS cases, named as real pytest names
them (checked against its collection), or its whole function when that cannot be told from the source."""

import ast
import subprocess
import sys

import pytest

from evals.agent.visible import case_ids, strip_tests, visible_tests

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
        [
            "tests/test_a.py::test_hidden[1]",
            "tests/test_a.py::test_hidden[2]",
            "tests/test_a.py::TestThing::test_hidden_method",
        ],
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


PARAMS = """import pytest


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a b", "a-b"),
        ("", ""),  # an empty id part
        ("\u00dcn\u00ef", "uni"),
        (-1, None),
        ((1, 2), 0.5),
        pytest.param("x", "x", id="named"),
    ],
)
def test_slug(text, expected):
    assert text is not None


class TestIds:
    @pytest.mark.parametrize("n", [1, 2, 3], ids=["one", "two", "three"])
    def test_ids(self, n):
        assert n
"""


def _collected(tmp_path, text: str) -> list[str]:
    """What real pytest collects from `text` as tests/test_p.py (our own fixture text, never a model's)."""
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_p.py").write_text(text)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests/test_p.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in out.splitlines() if line.startswith("tests/test_p.py::")]


def test_the_ids_made_from_the_source_are_those_pytest_collects(tmp_path):
    tree = ast.parse(PARAMS)
    slug, ids = tree.body[1], tree.body[2].body[0]
    made = [f"tests/test_p.py::test_slug[{c}]" for c in case_ids(slug.decorator_list[0])]
    made += [f"tests/test_p.py::TestIds::test_ids[{c}]" for c in case_ids(ids.decorator_list[0])]
    assert _collected(tmp_path, PARAMS) == made


def test_a_parametrised_test_loses_only_its_fail_to_pass_cases(tmp_path):
    everything = _collected(tmp_path, PARAMS)
    f2p = ["tests/test_p.py::test_slug[a b-a-b]", "tests/test_p.py::TestIds::test_ids[two]"]
    p2p = [t for t in everything if t not in f2p]
    (vf,) = visible_tests({"tests/test_p.py": PARAMS}, f2p, p2p)
    assert vf.text is not None and vf.removed == ("TestIds::test_ids[two]", "test_slug[a b-a-b]")
    assert '"a b"' not in vf.text and '"a-b"' not in vf.text and "two" not in vf.text and ", 2," not in vf.text
    # the other cases stay, each under the id it had: one pytest named by its index ((1, 2): text4) keeps it too,
    # so no kept case can take a cut one's id
    assert _collected(tmp_path, vf.text) == p2p


def test_every_case_fail_to_pass_cuts_the_function(tmp_path):
    f2p = [t for t in _collected(tmp_path, PARAMS) if "::test_slug[" in t]
    (vf,) = visible_tests({"tests/test_p.py": PARAMS}, f2p)
    assert vf.text is not None and "def test_slug" not in vf.text and "def test_ids" in vf.text
    assert vf.removed == ("test_slug",)


@pytest.mark.parametrize(
    "decorators, f2p, p2p",
    [
        ('CASES = [1, 2]\n\n\n@pytest.mark.parametrize("x", CASES)', ["test_x[1]"], ["test_x[2]"]),  # a variable
        ('@pytest.mark.parametrize("x", [1, 2])\n@pytest.mark.parametrize("y", [3])', ["test_x[3-1]"], []),  # stacked
        ('@pytest.mark.parametrize("x", [1, 1, 2])', ["test_x[1]"], []),  # ids collide (pytest would count them)
        ('@pytest.mark.parametrize("x", [1, 2], ids=str)', ["test_x[1]"], ["test_x[2]"]),  # ids by a callable
        ('@pytest.mark.parametrize("x", [b"a", b"b"])', ["test_x[a]"], ["test_x[b]"]),  # bytes: not named here
        ('@pytest.mark.parametrize("x", [1, 2])', ["test_x[1-a]"], ["test_x[2-a]", "test_x[1-b]"]),  # fixture params
        ('@pytest.mark.parametrize("x", [1, 2])', ["test_x[1]"], ["test_x[2]", "test_x[3]"]),  # a case not in the list
    ],
)
def test_cases_that_cannot_be_told_from_the_source_cut_the_whole_function(decorators, f2p, p2p):
    text = f"import pytest\n\n\ndef test_keep():\n    assert 1\n\n\n{decorators}\ndef test_x(x, y=0):\n    assert x\n"
    (vf,) = visible_tests({"tests/t.py": text}, [f"tests/t.py::{t}" for t in f2p], [f"tests/t.py::{t}" for t in p2p])
    assert vf.text is not None and "def test_x" not in vf.text and "def test_keep" in vf.text
    assert vf.removed == ("test_x",)


def test_a_class_parametrised_as_a_whole_loses_the_whole_method():
    text = (
        "import pytest\n\n\n@pytest.mark.parametrize('k', [0])\nclass TestK:\n"
        "    def test_keep(self, k):\n        assert 1\n\n"
        "    @pytest.mark.parametrize('x', [1, 2])\n    def test_x(self, k, x):\n        assert x\n"
    )
    (vf,) = visible_tests({"tests/t.py": text}, ["tests/t.py::TestK::test_x[1-0]"], ["tests/t.py::TestK::test_x[2-0]"])
    assert vf.text is not None and "def test_x" not in vf.text and vf.removed == ("TestK::test_x",)


# Found by review (each leaked a FAIL_TO_PASS case before its rule): what real pytest collects from the visible file
# never holds a FAIL_TO_PASS id, and a case whose data the body holds goes whole.
LEAKS = {
    "param_id_none_takes_ids": (
        '@pytest.mark.parametrize("v", [pytest.param("SECRET", id=None), pytest.param("b", id=None)], ids=["b", "a"])\n'
        "def test_x(v):\n    assert v\n",
        ["test_x[b]"],
    ),
    "names_as_a_list_unpack_each_case": (
        '@pytest.mark.parametrize(["x"], [("x1",), ("x0",)])\ndef test_x(x):\n    assert x\n',
        ["test_x[x1]"],
        '"x1"',
    ),
    "a_class_pytestmark": (
        'class TestN:\n    pytestmark: list = [pytest.mark.parametrize("k", ["z"])]\n\n'
        '    @pytest.mark.parametrize("n", ["a", "a-z"])\n    def test_n(self, n, k):\n        assert n\n',
        ["TestN::test_n[a-z]"],
    ),
    "a_mark_by_another_name": (
        'K = pytest.mark.parametrize("k", ["z"])\n\n\n@K\n@pytest.mark.parametrize("n", ["a", "a-z"])\n'
        "def test_n(n, k):\n    assert n\n",
        ["test_n[a-z]"],
    ),
    "the_body_holds_the_case_data": (
        '@pytest.mark.parametrize("key", ["x", "SECRET"])\ndef test_k(key):\n    assert {"x": 1, "SECRET": 42}[key]\n',
        ["test_k[SECRET]"],
    ),
}


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_no_fail_to_pass_case_survives_the_cut(tmp_path, name):
    source, f2p, *secret = LEAKS[name]
    text = "import pytest\n\n\ndef test_keep():\n    assert 1\n\n\n" + source
    f2p = [f"tests/test_p.py::{t}" for t in f2p]
    assert set(f2p) <= set(_collected(tmp_path, text))
    (vf,) = visible_tests({"tests/test_p.py": text}, f2p)
    assert vf.text is not None and "def test_keep" in vf.text
    assert not set(_collected(tmp_path, vf.text)) & set(f2p)
    assert (secret or ["SECRET"])[0] not in vf.text  # the cut case's data


def test_a_lone_carriage_return_hides_the_file():
    text = 'import pytest\r\r@pytest.mark.parametrize("s", ["a", "b"])\rdef test_s(s):\r    assert s\r'
    assert visible_tests({"tests/t.py": text}, ["tests/t.py::test_s[b]"])[0].text is None
