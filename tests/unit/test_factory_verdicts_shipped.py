"""The default world's test verdicts ship with the code (evals/factory/verdicts.tar.xz), so the demo's world build
reuses them instead of running ~830 mutants' suites twice. They must still be the verdicts this code would make: a
change to the harness, the seed projects or the mutation operators misses the cache, and this test says to repack."""

from __future__ import annotations

import hashlib
import tarfile

from evals.factory.verdicts import pack, seed_cache, shipped_manifest
from evals.factory.verify import harness_digest
from tests.support import make_config

REPACK = "python scripts/pack_verdicts.py (~10 min), or the demo's world build runs every validation again"
# The first candidates of one train project of the default world (seed 0): the same mutants, in the same order.
ONE_PROJECT = {
    "projects": ["lrucache"],
    "instances_per_project": 3,
    "candidates_per_project": 6,
    "dev_fraction": 0.0,
    "split_projects": {"train": ["lrucache"]},
}


def test_the_shipped_verdicts_were_made_with_this_harness():
    assert shipped_manifest()["harness_digest"] == harness_digest(), f"evals/harness changed: {REPACK}"


def test_a_world_build_takes_its_verdicts_from_the_shipped_cache(tmp_path):
    """A build through `build_tasks` runs no validation the shipped cache holds; with the setting off it runs them
    all here, and both builds keep the same instances."""
    # checked: fails when build_tasks does not seed the cache (seed_cache made a no-op: 0 of 6 cached)
    from evals.factory.build import build_tasks

    (tmp_path / "shipped").mkdir()
    (tmp_path / "own").mkdir()
    cfg = make_config(tmp_path / "shipped", tasks=ONE_PROJECT)
    shipped = build_tasks(cfg)
    tried = shipped.projects["lrucache"].tried
    assert tried > 0 and shipped.verdicts_cached == tried, f"{shipped.summary()}: {REPACK}"
    assert f"({tried} of {tried} mutants' verdicts cached)" in shipped.summary()

    own_cfg = make_config(tmp_path / "own", tasks={**ONE_PROJECT, "shipped_verdicts": False})
    own = build_tasks(own_cfg)
    assert own.verdicts_cached == 0 and own.projects["lrucache"].tried == tried
    assert _tasks(own_cfg) == _tasks(cfg)


def _tasks(cfg) -> list[tuple]:
    from evals.factory.instances import load_records

    return sorted(
        (r["instance_id"], r["split"], tuple(r["FAIL_TO_PASS"]), tuple(r["PASS_TO_PASS"])) for r in load_records(cfg)
    )


def test_seeding_keeps_what_the_cache_holds_and_reads_only_cache_entries(tmp_path):
    # checked: fails when seed_cache overwrites an entry, writes a member whose name is not a cache entry, or reads
    # an archive again that it has seeded from (its marker)
    import io

    src = tmp_path / "src"
    entry = f"ab/{'c' * 64}.json"
    (src / "ab").mkdir(parents=True)
    (src / entry).write_text('[{"from": "archive"}]')
    archive = tmp_path / "v.tar.xz"
    assert pack(src, archive, {"harness_digest": "x"}) == 1
    pack(src, tmp_path / "again.tar.xz", {"harness_digest": "x"})
    assert archive.read_bytes() == (tmp_path / "again.tar.xz").read_bytes()  # the same entries pack the same bytes

    cache = tmp_path / "cache"
    assert seed_cache(cache, archive) == 1 and (cache / entry).read_text() == '[{"from": "archive"}]'
    (cache / entry).write_text('[{"from": "this machine"}]')
    for marker in cache.glob(".seeded-*"):  # a second seeding of the same archive reads it again without its marker
        marker.unlink()
    assert seed_cache(cache, archive) == 0 and (cache / entry).read_text() == '[{"from": "this machine"}]'
    (cache / entry).unlink()  # with the marker back, the same archive is not read again
    assert seed_cache(cache, archive) == 0 and not (cache / entry).exists()

    hostile = tmp_path / "hostile.tar.xz"
    with tarfile.open(hostile, "w:xz") as tar:
        for name in ("../escape.json", "ab/not-a-digest.json", f"/{entry}"):
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"[]"))
    assert seed_cache(tmp_path / "cache2", hostile) == 0
    assert not (tmp_path / "escape.json").exists()
    assert [p.name for p in (tmp_path / "cache2").rglob("*")] == [
        f".seeded-{hashlib.sha256(hostile.read_bytes()).hexdigest()}"
    ]
