"""The base is exported with no git history, from a repository (bare or not), a folder or a .tar.gz; a missing one
is an EnvironmentMissing with the reason."""

import tarfile

import pytest

from evals.harness.environment import EnvironmentMissing, base_tree
from evals.harness.instance import Instance
from tests.harness_fixtures import CALC_BASE, calc_instance, write_files


def test_git_export_has_no_history_and_is_the_base(tmp_path):
    tiny = calc_instance(tmp_path)
    base, source = base_tree(tiny.instance, tiny.repos_dir, tmp_path / "cache")
    assert not (base / ".git").exists()
    assert (base / "calc/ops.py").read_text() == CALC_BASE["calc/ops.py"]  # not the future commit's fix
    assert source is not None and source.commit == tiny.instance.base_commit
    assert base_tree(tiny.instance, tiny.repos_dir, tmp_path / "cache")[0] == base  # cached


@pytest.mark.parametrize("kind", ["folder", "tar.gz", "tar.gz-flat"])
def test_environment_folder_or_tarball(tmp_path, kind):
    src = tmp_path / "src" / "calc-1.0"
    write_files(src, {**CALC_BASE, ".git/HEAD": "ref: refs/heads/main\n"})
    env = src
    if kind.startswith("tar.gz"):
        env = tmp_path / "env.tar.gz"
        with tarfile.open(env, "w:gz") as tar:
            if kind == "tar.gz":
                tar.add(src, arcname="calc-1.0")
            else:
                for child in src.iterdir():
                    tar.add(child, arcname=child.name)
    inst = Instance(instance_id="e-1", repo="acme/calc", environment=str(env))
    base, source = base_tree(inst, None, tmp_path / "cache")
    assert source is None and not (base / ".git").exists()
    assert (base / "calc/ops.py").read_text() == CALC_BASE["calc/ops.py"]


@pytest.mark.parametrize(
    "instance,match",
    [
        (Instance(instance_id="a", repo="acme/ghost", base_commit="abc"), "not found"),
        (Instance(instance_id="a", repo="acme/calc", base_commit="0" * 40), "base_commit"),
        (Instance(instance_id="a", repo="acme/calc", environment="/nonexistent/env.tar.gz"), "does not exist"),
    ],
)
def test_missing_environment_says_why(tmp_path, instance, match):
    tiny = calc_instance(tmp_path)
    with pytest.raises(EnvironmentMissing, match=match):
        base_tree(instance, tiny.repos_dir, tmp_path / "cache")
