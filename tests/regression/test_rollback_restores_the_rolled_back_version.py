"""`postgame rollback` twice must walk back along the promotion line, never forward to the version it rolled back
from: found by hand, v1 champion, v2 promoted, rollback -> v1, rollback again -> v2 (the bad version) served again,
because the previous-champion lookup read the rollback's own move (v2 -> v1) as "v2 served before v1".

The command runs in its own process against a real SQLite MLflow in the test's home; the versions are registered
straight from tiny folders (a rollback only moves aliases) and promoted by the gate's own `apply`.
"""

from __future__ import annotations

import json

from tests.support import cli_env, postgame_cli


def test_rollback_twice_goes_back_along_the_line_then_says_there_is_none(cfg):
    from models import registry
    from models.promote import Decision, apply

    for label in ("v1", "v2", "v3"):
        folder = cfg.home / "checkpoints" / label
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps({"label": label}))
        registry.register(cfg, folder.as_uri(), tags={})
    registry.set_champion(cfg, "1", why="the base policy", by="bootstrap")
    for version, champion in (("2", "1"), ("3", "2")):
        apply(cfg, version, Decision(True, f"v{version} beats v{champion}", 0.5, 0.25), expected_champion=champion)
    assert registry.champion_version(cfg).version == "3"

    env = cli_env(POSTGAME_ACTOR="oncall")
    first = json.loads(postgame_cli(cfg, "rollback", "--why", "v3 times out", "--json", env=env).stdout)
    assert (first["from"], first["to"], first["rollback"]) == ("3", "2", True)
    second = json.loads(postgame_cli(cfg, "rollback", "--why", "v2 as well", "--json", env=env).stdout)
    assert (second["from"], second["to"]) == ("2", "1")  # the old lookup restored v3 here
    assert registry.champion_version(cfg).version == "1"

    none_left = postgame_cli(cfg, "rollback", check=False, env=env)
    assert none_left.returncode == 1 and none_left.stdout == ""
    assert none_left.stderr.strip().splitlines() == [
        "error: RollbackError: no previous champion of postgame-policy to restore (current: v1; rolled back from: "
        "v3, v2); name one with --to V"
    ]
    assert registry.champion_version(cfg).version == "1"

    # Every move keeps its reason and who made it.
    assert [(m.from_, m.to, m.by, m.rollback) for m in registry.champion_history(cfg)] == [
        (None, "1", "bootstrap", False),
        ("1", "2", "gate", False),
        ("2", "3", "gate", False),
        ("3", "2", "oncall", True),
        ("2", "1", "oncall", True),
    ]
    assert [m.why for m in registry.champion_history(cfg)][-2:] == [
        "rollback from v3 to v2: v3 times out",
        "rollback from v2 to v1: v2 as well",
    ]
    assert registry.get_version(cfg, "1").tags["champion.by"] == "oncall"
