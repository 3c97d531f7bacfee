"""The ingest and validate sections of the config: cross-field rules name both fields; bounds are overridable."""

from __future__ import annotations

import pytest

from postgame.config import load_config
from postgame.errors import ConfigError
from postgame.settings.validate import CHECKS, Bound


def test_bad_values_name_the_key_and_the_rule():
    with pytest.raises(ConfigError, match="state_prefix"):
        load_config(path=None, env={"POSTGAME_INGEST__STATE_PREFIX": "ingest"})
    with pytest.raises(ConfigError, match="validate.quarantine_rate_severity = 'fatal'"):
        load_config(path=None, env={"POSTGAME_VALIDATE__QUARANTINE_RATE_SEVERITY": "fatal"})


def test_batch_bounds_come_from_config():
    cfg = load_config(
        path=None,
        env={"POSTGAME_VALIDATE__QUARANTINE_RATE_MAX": "0.05", "POSTGAME_VALIDATE__LATENCY_DRIFT_SEVERITY": "critical"},
    )
    assert cfg.validate_.bound("quarantine_rate") == Bound(max=0.05, severity="critical")
    assert cfg.validate_.bound("latency_drift") == Bound(max=1.0, severity="critical")
    # The untouched checks keep their documented defaults (a literal table, not the implementation's own lookup).
    defaults = {
        "duplicate_rate": Bound(0.5, "warning"),
        "malformed_call_share": Bound(0.1, "warning"),
        "resolved_share_drift": Bound(0.25, "warning"),
        "prompt_tokens_drift": Bound(1.0, "warning"),
        "completion_tokens_drift": Bound(1.0, "warning"),
    }
    assert set(defaults) | {"quarantine_rate", "latency_drift"} == set(CHECKS)
    assert {check: cfg.validate_.bound(check) for check in defaults} == defaults
