"""A failed in-process `postgame cycle` prints one `error:` line and where the traceback went — not Prefect's console
log of the failing flow run (with its traceback), nor what Prefect logs after the command ends (its temporary server
stopping). Prefect's logs of the failure stay in the log file.

The cycle runs in a subprocess, in-process mode (no stack: Prefect's ephemeral server), on a source folder that does
not exist: ingest fails at once with a StoreError.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import make_config


def test_a_failed_cycle_prints_one_line_and_the_traceback_file(tmp_path):
    cfg = make_config(tmp_path, operate={"retries": 0})
    missing = tmp_path / "no-logs-here"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTGAME_", "PREFECT_", "MLFLOW_"))}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "postgame",
            "--config",
            str(tmp_path / "postgame.yaml"),
            "cycle",
            "--source",
            str(missing),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert len(lines) == 2, proc.stderr[-3000:]
    assert lines[0] == f"error: StoreError: source folder {missing} does not exist"
    traceback_file = Path(lines[1].strip().removeprefix("(traceback: ").removesuffix(")"))
    assert traceback_file.parent == cfg.home / "logs" and traceback_file.name.startswith("error-")
    assert "postgame.ingest.errors.StoreError" in traceback_file.read_text()
    library_log = (cfg.home / cfg.demo.log_file).read_text()
    assert "Encountered exception during execution" in library_log and "Traceback" in library_log  # Prefect's own
    assert "Stopping temporary server" in library_log
