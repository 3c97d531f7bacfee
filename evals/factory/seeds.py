"""Seed projects: small pure-Python packages with real pytest suites, shipped as data under `evals/seeds/<name>/`
(`<name>/` the package, `tests/` the suite, `seed.json` = {name, repo, description, domain}).

A seed is split the SWE-bench way: `source` (the repository at base, without tests) and `tests` (added by every
instance's `test_patch`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import evals
from evals.factory.files import Files, diff_trees, read_tree, write_tree

TESTS_DIR = "tests/"
METADATA = "seed.json"


def default_seeds_dir() -> Path:
    return Path(evals.__file__).resolve().parent / "seeds"


@dataclass(frozen=True)
class SeedProject:
    name: str
    repo: str
    description: str
    domain: str
    source: Files
    tests: Files

    @property
    def package(self) -> str:
        return self.name

    @property
    def repo_dirname(self) -> str:
        return self.repo.replace("/", "__")

    @cached_property
    def test_patch(self) -> str:
        return diff_trees({}, self.tests)

    @property
    def test_sources(self) -> dict[str, str]:
        return {path: data.decode() for path, data in self.tests.items() if path.endswith(".py")}

    def modules(self) -> list[str]:
        """The package's modules: where bugs are injected."""
        return sorted(p for p in self.source if p.startswith(f"{self.package}/") and p.endswith(".py"))

    @cached_property
    def digest(self) -> str:
        h = hashlib.sha256()
        for path in sorted({**self.source, **self.tests}):
            data = self.source.get(path, self.tests.get(path))
            h.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
        return h.hexdigest()


def load_seed(root: Path) -> SeedProject:
    meta = json.loads((root / METADATA).read_text())
    files = read_tree(root)
    files.pop(METADATA, None)
    tests = {p: d for p, d in files.items() if p.startswith(TESTS_DIR)}
    source = {p: d for p, d in files.items() if not p.startswith(TESTS_DIR)}
    if meta["name"] != root.name:
        raise ValueError(f"{root / METADATA}: name {meta['name']!r} differs from the folder name {root.name!r}")
    return SeedProject(meta["name"], meta["repo"], meta.get("description", ""), meta.get("domain", ""), source, tests)


def write_seed(seed: SeedProject, root: Path) -> None:
    """Write `seed` out as a seed folder (what `load_seed` reads back identically)."""
    write_tree({**seed.source, **seed.tests}, root)
    meta = {"name": seed.name, "repo": seed.repo, "description": seed.description, "domain": seed.domain}
    (root / METADATA).write_text(json.dumps(meta, indent=2) + "\n")


def load_seeds(seeds_dir: Path | None = None, names: list[str] | None = None) -> list[SeedProject]:
    """Seed projects found under `seeds_dir` (those with a seed.json, a package and tests), sorted by name."""
    seeds_dir = Path(seeds_dir) if seeds_dir else default_seeds_dir()
    found = {p.parent.name: p.parent for p in sorted(seeds_dir.glob(f"*/{METADATA}"))}
    if names:
        missing = sorted(set(names) - set(found))
        if missing:
            raise ValueError(
                f"factory.projects = {names}: {missing} not found in {seeds_dir} "
                f"(available: {', '.join(sorted(found))})"
            )
        found = {n: found[n] for n in names}
    seeds = []
    for name in sorted(found):
        seed = load_seed(found[name])
        if seed.modules() and seed.tests:
            seeds.append(seed)
    return seeds
