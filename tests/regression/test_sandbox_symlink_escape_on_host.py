"""A model patch that turns a test folder into a symlink to a host folder cannot make the harness (which writes the
grader's files back) write on the host."""

from evals.harness import evaluate
from tests.harness_fixtures import Link, calc_instance, diff_against, quick_settings


def test_symlinked_test_folder_does_not_write_on_the_host(tmp_path):
    tiny = calc_instance(tmp_path)
    host = tmp_path / "host-folder"
    host.mkdir()
    patch = diff_against(
        tiny.base_files, {"tests/test_ops.py": None, "tests": Link(str(host)), "calc/evil": Link("/etc/passwd")}
    )
    result = evaluate(tiny.instance, patch, repos_dir=tiny.repos_dir, settings=quick_settings())
    assert list(host.iterdir()) == []
    assert result.status == "unresolved" and result.error is None
