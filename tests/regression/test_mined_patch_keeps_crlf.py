"""A mined gold patch must apply to its base when the fixed file has CRLF line endings.

Reading `git diff` in text mode turned the patch's CRLF lines into LF ones, so it no longer matched the file: on
mahmoud/glom one real fix (ec19f8b, which deletes a CRLF module) was dropped as `gold_does_not_apply`."""

from __future__ import annotations

from evals.factory.mine import mine_project
from evals.factory.projects import add_project
from postgame.settings.factory import FactorySettings
from postgame.store import LocalStore
from tests.harness_fixtures import commit, init_repo, quick_settings


def test_a_fix_to_a_crlf_file_is_mined(tmp_path):
    crlf = "def add(a, b):\r\n    return a - b\r\n"
    suite = "from calc.ops import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
    repo = tmp_path / "calc"
    init_repo(repo, {"calc/__init__.py": "", "calc/ops.py": crlf, "tests/test_ops.py": suite})
    more = suite + "\n\ndef test_one_plus_one():\n    assert add(1, 1) == 2\n"
    commit(repo, {"calc/ops.py": crlf.replace("a - b", "a + b"), "tests/test_ops.py": more}, "fix add")
    settings, store = FactorySettings(own={"mine_runs": 2}), LocalStore(tmp_path / "store")
    add_project(str(repo), settings, quick_settings(), store, cache_dir=tmp_path / "cache")
    result = mine_project("calc", settings, quick_settings(), store, cache_dir=tmp_path / "cache")
    assert result.kept == 1, result.dropped  # was {"gold_does_not_apply": 1, ...}
