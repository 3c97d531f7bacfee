"""Train / eval / holdout by seed project: no project is in two splits, so evaluation measures generalisation to code
the policy never trained on. Inside each train project a seeded share of its instances is set aside as `indomain`:
new bugs in code the policy serves (and may read), never trained on; with `factory.dev_fraction`, a seeded share of
those is `dev` instead: the bugs settings are tuned on, so that the gate decides on bugs no setting was chosen on.

A team's registered repositories (`postgame factory add`) take the role `factory.own.split` gives them (in-domain =
`train` by default: their synthetic bugs trained on, a share held out as `indomain`, their mined real bugs all
`indomain`), unless `factory.split_projects` pins one; the shipped seeds are dealt among themselves as before, so
adding a project never moves a seed (they stay the unseen-project guards).
"""

from __future__ import annotations

import random

from evals.factory.seeds import SeedProject
from postgame.settings.factory import SPLITS, FactorySettings


def assign_splits(projects: list[str], settings: FactorySettings) -> dict[str, str]:
    """{project: split}. Pinned projects keep their split; the others are shuffled by the seed and dealt out so that
    each split's share of projects is as close to `split_fractions` as whole projects allow (every split with a
    positive fraction gets at least one project when there are enough)."""
    pinned = {p: split for split, names in settings.split_projects.items() for p in names if p in projects}
    free = sorted(set(projects) - set(pinned))
    random.Random(f"splits:{settings.seed}").shuffle(free)

    total = len(projects)
    want = {s: settings.split_fractions[s] * total for s in SPLITS}
    counts = {s: int(want[s]) for s in SPLITS}
    # Largest remainder, then make sure no split with a positive share is left empty.
    for s in sorted(SPLITS, key=lambda s: (-(want[s] - counts[s]), SPLITS.index(s))):
        if sum(counts.values()) >= total:
            break
        counts[s] += 1
    for s in SPLITS:
        if counts[s] == 0 and settings.split_fractions[s] > 0 and total >= len(SPLITS):
            donor = max(SPLITS, key=lambda d: counts[d])
            counts[donor] -= 1
            counts[s] += 1
    for split in pinned.values():
        counts[split] = max(0, counts[split] - 1)

    out = dict(pinned)
    for split in SPLITS:
        take = min(counts[split], len(free))
        out.update({p: split for p in free[:take]})
        free = free[take:]
    out.update({p: "train" for p in free})  # leftovers only when pins overfill a split
    return out


def _seeded_share(ids_by_project: dict[str, list[str]], fraction: float, draw: str) -> set[str]:
    """Per project, round(fraction × n) of its ids, drawn by `draw` from the sorted ids: the choice depends on neither
    their order nor the other projects."""
    chosen: set[str] = set()
    for project in sorted(ids_by_project):
        ids = sorted(ids_by_project[project])
        random.Random(f"{draw}:{project}").shuffle(ids)
        chosen.update(ids[: round(fraction * len(ids))])
    return chosen


def assign_indomain(instance_ids: dict[str, list[str]], settings: FactorySettings) -> set[str]:
    """The instance ids (of train projects: {project: ids}) set aside as `indomain`: per project, round(fraction × n)
    of its ids, drawn by the seed from the sorted ids, so the choice depends on neither order nor other projects."""
    return _seeded_share(instance_ids, settings.indomain_fraction, f"indomain:{settings.seed}")


def assign_dev(held_out: dict[str, list[str]], settings: FactorySettings) -> set[str]:
    """The held-out instance ids (of train projects: {project: ids}) moved to `dev`: per project, round(dev_fraction
    × n) of them, drawn by the seed from the sorted ids (a draw of its own: the `indomain` choice does not move)."""
    return _seeded_share(held_out, settings.dev_fraction, f"dev:{settings.seed}")


def train_projects(projects: list[str], settings: FactorySettings) -> list[str]:
    """The projects of the train split: the only code a base policy may be pre-trained on."""
    splits = assign_splits(projects, settings)
    return sorted(p for p in projects if splits[p] == "train")


def project_splits(seeds: list[SeedProject], settings: FactorySettings) -> dict[str, str]:
    """{project: split}: shipped seeds drawn by `split_fractions` among themselves (a registered project never moves
    them), registered ones in the role `factory.own.split` gives them unless `split_projects` pins them."""
    splits = assign_splits([s.name for s in seeds if not s.role], settings)
    pinned = {p: split for split, names in settings.split_projects.items() for p in names}
    splits.update({s.name: pinned.get(s.name, settings.own.split) for s in seeds if s.role})
    return splits
