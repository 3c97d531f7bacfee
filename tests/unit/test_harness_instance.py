"""Instances and predictions in the SWE-bench format: lists or JSON strings, extra fields kept, clear errors."""

import json

import pytest

from evals.harness.instance import HarnessInputError, Instance, Prediction, load_instances, load_predictions
from evals.harness.testrun import UnsupportedTestCommand, pytest_args
from postgame.settings.harness import HarnessSettings


def test_test_lists_accept_json_strings_like_swe_bench():
    inst = Instance(instance_id="a", repo="o/n", FAIL_TO_PASS='["t.py::a"]', PASS_TO_PASS=["t.py::b"])
    assert inst.FAIL_TO_PASS == ["t.py::a"] and inst.PASS_TO_PASS == ["t.py::b"]


def test_extra_fields_are_kept():
    inst = Instance(instance_id="a", repo="o/n", split="train", seed_project="calc", prompt_files=["x.py"])
    assert inst.model_extra == {"split": "train", "seed_project": "calc", "prompt_files": ["x.py"]}
    assert inst.repo_dirname == "o__n"


@pytest.mark.parametrize("bad", ['["unclosed', "[1, 2]", '{"a": 1}'])
def test_bad_test_lists_fail(bad):
    with pytest.raises(ValueError):
        Instance(instance_id="a", repo="o/n", FAIL_TO_PASS=bad)


def test_load_jsonl_and_json_list(tmp_path):
    rows = [{"instance_id": f"i{n}", "repo": "o/n", "environment": "env", "FAIL_TO_PASS": "[]"} for n in range(2)]
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    listed = tmp_path / "b.json"
    listed.write_text(json.dumps(rows))
    for path in (jsonl, listed):
        loaded = load_instances(path)
        assert [i.instance_id for i in loaded] == ["i0", "i1"]
        assert loaded[0].environment == str(tmp_path / "env")  # relative to the file


def test_load_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"instance_id": "a", "repo": "o/n"}\n{"instance_id": "b"}\n')
    with pytest.raises(HarnessInputError, match=r"bad.jsonl:2: repo"):
        load_instances(path)
    path.write_text('{"instance_id": "a", "repo": "o/n"}\n{not json\n')
    with pytest.raises(HarnessInputError, match=r"bad.jsonl:2: not valid JSON"):
        load_instances(path)
    path.write_text('{"instance_id": "a", "repo": "o/n"}\n{"instance_id": "a", "repo": "o/n"}\n')
    with pytest.raises(HarnessInputError, match="duplicate"):
        load_instances(path)
    with pytest.raises(HarnessInputError, match="cannot read"):
        load_instances(tmp_path / "missing.jsonl")


def test_predictions_formats(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"instance_id": "a", "model_name_or_path": "m", "model_patch": None})
        + "\n"
        + json.dumps({"instance_id": "a", "model_patch": "second wins"})
        + "\n"
    )
    (pred,) = load_predictions(path)
    assert pred.model_patch == "second wins"
    keyed = tmp_path / "p.json"
    keyed.write_text(json.dumps({"a": {"model_patch": "x", "model_name_or_path": "m"}}))
    assert load_predictions(keyed) == [Prediction(instance_id="a", model_patch="x", model_name_or_path="m")]


@pytest.mark.parametrize(
    "cmd,args",
    [
        (None, ["-rA", "tests/test_a.py"]),
        ("python -m pytest -rA tests/x.py -k foo", ["-rA", "tests/x.py", "-k", "foo"]),
        ("python3 -m pytest tests", ["tests"]),
        ("pytest -x", ["-x"]),
    ],
)
def test_pytest_args(cmd, args):
    inst = Instance(instance_id="a", repo="o/n", test_cmd=cmd)
    assert pytest_args(inst, ["tests/test_a.py"]) == args


def test_non_pytest_command_is_refused():
    with pytest.raises(UnsupportedTestCommand):
        pytest_args(Instance(instance_id="a", repo="o/n", test_cmd="make test"), [])


def test_settings_reject_bad_values_naming_them():
    with pytest.raises(ValueError, match="tmp_size_mb"):
        HarnessSettings(memory_mb=128, tmp_size_mb=256)
    with pytest.raises(ValueError, match="extra"):
        HarnessSettings(timeout=3)
    assert HarnessSettings(timeout_s=10).effective_cpu_time_s == 15
