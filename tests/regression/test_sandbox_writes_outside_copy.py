"""Code under test cannot write outside its copy: not /usr (even trying to remount it), not /root, not the host's
/tmp, not the repositories, not the harness's own tools or Python."""

import sys
import uuid
from pathlib import Path

import pytest

from evals.harness import evaluate, sandbox
from tests.harness_fixtures import calc_instance, in_add, quick_settings

pytestmark = pytest.mark.sandbox("bwrap")


def test_writes_outside_the_copy_land_nowhere(tmp_path):
    tiny = calc_instance(tmp_path)
    tag = uuid.uuid4().hex[:8]
    tools = sandbox.TOOLS_DIR / "pg_results.py"
    targets = [
        f"/usr/pg-evil-{tag}",
        f"/root/pg-evil-{tag}",
        str(tmp_path / f"host-evil-{tag}"),
        str(tiny.repo_dir / f"evil-{tag}"),
        f"{sys.prefix}/pg-evil-{tag}",
        f"/etc/pg-evil-{tag}",
        "/opt/postgame-harness/pg_results.py",
    ]
    body = f"""
import subprocess
for target in {targets!r}:
    try:
        with open(target, "a") as f:
            f.write("pwned")
        print("WROTE", target)
    except OSError as exc:
        print("BLOCKED", target, type(exc).__name__)
print("REMOUNT", subprocess.run(["mount", "-o", "remount,rw", "/usr"], capture_output=True).returncode)
"""
    before = tools.read_bytes()
    result = evaluate(tiny.instance, in_add(tiny, body), repos_dir=tiny.repos_dir, settings=quick_settings())
    assert result.sandbox == "bwrap"
    for target in targets[:-1]:
        assert not Path(target).exists(), target
    assert tools.read_bytes() == before
    assert "WROTE" not in result.log and "BLOCKED" in result.log
