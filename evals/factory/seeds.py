"""Seed projects: small pure-Python packages with real pytest suites, shipped as data under `evals/seeds/<name>/`
(`<name>/` the package, `tests/` the suite, `seed.json` = {name, repo, description, domain}).

A seed is split the SWE-bench way: `source` (the repository at base, without tests) and `tests` (added by every
instance's `test_patch`).

A project a team registers (`postgame factory add`, evals/factory/projects.py) is a seed too, with its own layout
written in its seed.json: `packages` (the folders bugs go into: `src/pkg`, `pkg`), `tests` (path prefixes of the
suite: `tests/`, `pkg/tests/`, `conftest.py`), `exclude` (modules never mutated, e.g. a generated `_version.py`),
`test_cmd` and `env_spec` (the environment its tests run in, carried by every instance), and `role`.
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
    packages: tuple[str, ...] = ()  # folders holding the code bugs go into; () = (name,)
    test_dirs: tuple[str, ...] = (TESTS_DIR,)  # path prefixes of the suite
    exclude: tuple[str, ...] = ()  # modules never mutated
    test_cmd: str | None = None
    env_spec: dict | None = None
    role: str = ""  # a registered project's split role ("" = a shipped seed, drawn by factory.split_fractions)

    @property
    def package(self) -> str:
        """The import name of the (first) package."""
        return self.packages[0].rsplit("/", 1)[-1] if self.packages else self.name

    @property
    def package_dirs(self) -> tuple[str, ...]:
        return self.packages or (self.name,)

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
        return sorted(
            p
            for p in self.source
            if p.endswith(".py") and p not in self.exclude and any(p.startswith(f"{d}/") for d in self.package_dirs)
        )

    @cached_property
    def digest(self) -> str:
        h = hashlib.sha256()
        for path in sorted({**self.source, **self.tests}):
            data = self.source[path] if path in self.source else self.tests[path]
            h.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
        if self.packages or self.test_cmd or self.env_spec:  # a shipped seed's digest stays what it was
            layout = [self.packages, self.test_dirs, self.exclude, self.test_cmd, self.env_spec, self.role]
            h.update(json.dumps(layout, sort_keys=True).encode())
        return h.hexdigest()


def _text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def load_seed(root: Path) -> SeedProject:
    meta = json.loads((root / METADATA).read_text())
    files = read_tree(root)
    files.pop(METADATA, None)
    test_dirs = tuple(meta.get("tests", [TESTS_DIR]))
    tests = {p: d for p, d in files.items() if p.startswith(test_dirs) and _text(d)}
    source = {p: d for p, d in files.items() if p not in tests}  # a binary test fixture stays in the base
    if meta["name"] != root.name:
        raise ValueError(f"{root / METADATA}: name {meta['name']!r} differs from the folder name {root.name!r}")
    return SeedProject(
        meta["name"],
        meta["repo"],
        meta.get("description", ""),
        meta.get("domain", ""),
        source,
        tests,
        packages=tuple(meta.get("packages", ())),
        test_dirs=test_dirs,
        exclude=tuple(meta.get("exclude", ())),
        test_cmd=meta.get("test_cmd"),
        env_spec=meta.get("env_spec"),
        role=meta.get("role", ""),
    )


def write_seed(seed: SeedProject, root: Path) -> None:
    """Write `seed` out as a seed folder (what `load_seed` reads back identically)."""
    write_tree({**seed.source, **seed.tests}, root)
    meta: dict = {"name": seed.name, "repo": seed.repo, "description": seed.description, "domain": seed.domain}
    if seed.packages or seed.test_cmd or seed.env_spec or seed.test_dirs != (TESTS_DIR,):
        meta.update(
            packages=list(seed.packages),
            tests=list(seed.test_dirs),
            exclude=list(seed.exclude),
            test_cmd=seed.test_cmd,
            env_spec=seed.env_spec,
            role=seed.role,
        )
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
