"""Code under test sees no host secret: not the harness's environment, not $HOME, not files by absolute path. The
secret ends up in no log and no report."""

import json

from evals.harness import run_evaluation, sandbox
from evals.harness.instance import Prediction
from tests.harness_fixtures import calc_instance, in_add, quick_settings

SECRET_ENV = "pg-env-secret-6f1d2c"
SECRET_FILE = "pg-file-secret-93ab07"


def test_secrets_stay_out_of_the_sandbox_logs_and_reports(tmp_path, monkeypatch):
    tiny = calc_instance(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(SECRET_FILE)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_ENV)
    body = f"""
import os
print("ENV", dict(os.environ))
for path in (os.path.expanduser("~/.aws/credentials"), {str(home / ".aws" / "credentials")!r}):
    try:
        print("READ", open(path).read())
    except OSError as exc:
        print("NOFILE", path, type(exc).__name__)
"""
    out = tmp_path / "out"
    report = run_evaluation(
        [tiny.instance],
        [Prediction(instance_id=tiny.instance.instance_id, model_patch=in_add(tiny, body))],
        repos_dir=tiny.repos_dir,
        out_dir=out,
        settings=quick_settings(),
        progress=False,
    )
    result = report.results[tiny.instance.instance_id]
    assert "ENV" in result.log  # the code ran and printed what it could see
    written = "".join(p.read_text() for p in out.rglob("*") if p.is_file()) + json.dumps(report.to_dict())
    assert SECRET_ENV not in written and SECRET_ENV not in result.log
    if sandbox.probe().bwrap_ok:
        assert SECRET_FILE not in written and SECRET_FILE not in result.log
        assert "NOFILE" in result.log
