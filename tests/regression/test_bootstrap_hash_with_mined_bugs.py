"""`postgame bootstrap` crashed with KeyError: 'key' on a task world holding bugs mined from a project's history
(`factory mine`): their `mutation` record has no key, and the base's content hash read one from every instance; so
did the list of held-out bugs the base's corpus leaves out (`bootstrap --from-scratch`, the agent base)."""

from __future__ import annotations

from models.base_data import held_out_bugs
from models.bootstrap import BaseInputs
from postgame.config import PolicySettings

SYNTHETIC = {
    "instance_id": "a-1",
    "seed_project": "a",
    "split": "train",
    "problem_statement": "x",
    "mutation": {"key": "k1", "line": 3},
}
MINED = {
    "instance_id": "a-2",
    "split": "indomain",
    "problem_statement": "y",
    "mutation": {"line": 0, "operator": "mined", "original": "24c21dcc", "path": "glom/cli.py", "replacement": ""},
}


def test_the_base_hash_covers_mined_bugs_too():
    with_mined = BaseInputs(corpus=[], train_seeds=[], records=[SYNTHETIC, MINED]).content_hash(PolicySettings())
    alone = BaseInputs(corpus=[], train_seeds=[], records=[SYNTHETIC]).content_hash(PolicySettings())
    other = {**MINED, "mutation": {**MINED["mutation"], "original": "ffff"}}
    assert with_mined != alone  # a mined bug is one more held-out instance the hash must see
    assert with_mined != BaseInputs(corpus=[], train_seeds=[], records=[SYNTHETIC, other]).content_hash(
        PolicySettings()
    )


def test_held_out_bugs_leave_mined_ones_aside():
    held_out = {**SYNTHETIC, "instance_id": "a-3", "split": "indomain", "mutation": {"key": "k3", "path": "a/m.py"}}
    assert held_out_bugs([SYNTHETIC, held_out, {**MINED, "seed_project": "glom"}]) == {("a", "a/m.py", "k3")}
