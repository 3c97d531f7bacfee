"""Snapshots, diffs and repositories are reproducible: same files in, same bytes and commit ids out (the catalog is
deterministic from its seed and snapshots are named by their hash)."""

from __future__ import annotations

import subprocess

from evals.factory.files import build_git_repo, diff_file, diff_trees, make_targz, read_targz

FILES = {"pkg/__init__.py": b"", "pkg/core.py": b"def f(x):\n    return x + 1\n", "README.md": "héllo\n".encode()}


def test_tarball_bytes_depend_only_on_paths_and_contents():
    again = dict(reversed(list(FILES.items())))
    assert make_targz(FILES, "proj") == make_targz(again, "proj")
    assert make_targz(FILES, "proj") != make_targz({**FILES, "pkg/core.py": b"x"}, "proj")
    assert read_targz(make_targz(FILES, "proj")) == FILES


def test_diffs_apply_with_git(tmp_path):
    (tmp_path / "pkg").mkdir()
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    new = {
        **FILES,
        "pkg/core.py": b"def f(x):\n    return x - 1\n",
        "tests/test_core.py": b"def test():\n    pass\n",
        "tail.txt": b"no newline at end",
    }
    del new["README.md"]
    patch = diff_trees(FILES, new)
    assert "new file mode 100644" in patch and "deleted file mode 100644" in patch
    assert "\\ No newline at end of file" in patch
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "apply", "-"], input=patch.encode(), cwd=tmp_path, check=True)
    assert (tmp_path / "pkg/core.py").read_bytes() == new["pkg/core.py"]
    assert (tmp_path / "tail.txt").read_bytes() == b"no newline at end"
    assert not (tmp_path / "README.md").exists()
    assert diff_file("x.py", "same\n", "same\n") == ""


def test_git_repositories_have_the_same_commit_ids_wherever_they_are_built(tmp_path):
    buggy = {**FILES, "pkg/core.py": b"def f(x):\n    return x + 2\n"}
    clean_a, tags_a = build_git_repo(tmp_path / "a", FILES, {"p-1": buggy}, "clean\n")
    clean_b, tags_b = build_git_repo(tmp_path / "b", FILES, {"p-1": buggy}, "clean\n")
    assert (clean_a, tags_a) == (clean_b, tags_b)

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(tmp_path / "a"), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    assert git("rev-parse", "p-1^") == clean_a  # one commit per instance, on top of the clean commit
    assert git("show", f"{tags_a['p-1']}:pkg/core.py") == "def f(x):\n    return x + 2"
    assert git("status", "--porcelain") == ""  # the work tree holds the clean commit


def test_a_seed_written_out_reads_back_identically(tmp_path):
    """Builds freeze the seeds they read (someone may edit evals/seeds meanwhile): the copy must be exact."""
    from evals.factory.seeds import load_seed, load_seeds, write_seed

    seed = load_seeds()[0]
    write_seed(seed, tmp_path / seed.name)
    again = load_seed(tmp_path / seed.name)
    assert again == seed and again.digest == seed.digest and again.test_patch == seed.test_patch
