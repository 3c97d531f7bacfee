"""What every command prints: one JSON object with --json (and nothing else on stdout), else short lines."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any


def echo_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, sort_keys=True, default=str))


def quiet_stdout(as_json: bool) -> contextlib.AbstractContextManager:
    """With --json, stdout carries the JSON object alone: what libraries print (MLflow's "View run ... at") goes to
    stderr instead."""
    return contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()
