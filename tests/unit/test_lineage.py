"""Lineage hashes and the chain's verdict (`postgame.lineage`); the chain of a real cycle is in tests/flows."""

from __future__ import annotations

from postgame.lineage import Hop, Lineage, config_sha256, tree_sha256
from tests.support import make_config


def test_tree_hash_pins_every_file_and_its_name(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "sub" / "weights.bin").write_bytes(b"\x00\x01")
    first = tree_sha256(tmp_path)
    assert tree_sha256(tmp_path) == first
    (tmp_path / "sub" / "weights.bin").write_bytes(b"\x00\x02")
    assert tree_sha256(tmp_path) != first
    (tmp_path / "sub" / "weights.bin").write_bytes(b"\x00\x01")
    (tmp_path / "sub" / "weights.bin").rename(tmp_path / "sub" / "other.bin")
    assert tree_sha256(tmp_path) != first


def test_config_hash_is_the_recipe_not_where_it_ran(tmp_path):
    for name in "abc":
        (tmp_path / name).mkdir()
    a, b = make_config(tmp_path / "a"), make_config(tmp_path / "b")
    assert a.home != b.home and a.stack.prefect_port != b.stack.prefect_port
    assert config_sha256(a) == config_sha256(b)
    assert config_sha256(make_config(tmp_path / "c", train={"max_steps": 7})) != config_sha256(a)


def test_a_chain_is_ok_only_when_it_has_hops_and_none_is_broken():
    hop = Hop("dataset", "d", "file:///d", "abc", True, "sha256 matches")
    assert Lineage("m", "1", (hop,)).ok
    assert not Lineage("m", "1", ()).ok
    broken = Lineage("m", "1", (hop, Hop("log_object", "k", "file:///k", "e", False, "gone")))
    assert not broken.ok and [h.name for h in broken.broken] == ["k"]
    assert "BROKEN" in broken.text() and broken.rows()[1]["ok"] == "BROKEN"
