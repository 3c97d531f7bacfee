"""Where learning is measured: a policy's pass@1 and pass@k on a split, beside the empty-patch and random-single-edit
baselines, every patch graded by the real harness (`evals.harness.run_evaluation`).

    scores = measure_split(cfg, policy, "indomain", k=4, out_dir=DIR)
    print(scores.line())     # indomain  n=56  pass@1 12.5%  pass@4 19.6%  empty 0.0%  random-edit 3.6%

- pass@1: one greedy answer per task (deterministic), as the scaffold submits it (models/answer.py: the likeliest
  of its beams whose edit applies to the code shown and changes something);
- pass@k: k sampled answers (temperature `policy.temperature`, seeds 1..k); a task counts when any resolves;
- empty: the empty patch (resolves nothing by construction; graded anyway, so a broken catalog shows);
- random-edit: one random single-operator edit (the factory's mutation operators) of the oracle code window, seeded:
  what guessing resolves.
An infrastructure error is counted apart (`errors`), never as a model failure.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from postgame.config import Config


@dataclass(frozen=True)
class SplitScores:
    split: str
    instances: int
    k: int
    pass_at_1: float
    pass_at_k: float | None
    empty: float
    random_edit: float
    well_formed: float  # share of greedy completions that hold a patch the harness can try
    errors: int  # infrastructure errors over every grading of this split

    def line(self) -> str:
        at_k = f"pass@{self.k} {self.pass_at_k:6.1%}" if self.pass_at_k is not None else ""
        return (
            f"{self.split:9s} n={self.instances:<4d} pass@1 {self.pass_at_1:6.1%}  {at_k}  empty {self.empty:5.1%}  "
            f"random-edit {self.random_edit:5.1%}  well-formed {self.well_formed:5.1%}  errors {self.errors}"
        )

    def to_dict(self) -> dict:
        return asdict(self)


def random_single_edit(instance, files: dict[str, str], rng: random.Random) -> str:
    """One random single-operator edit of the task's oracle window, as a diff ("" when the window has none)."""
    from evals.factory.files import diff_file
    from evals.factory.mutate import find_mutations
    from evals.prompts import oracle_window

    window = oracle_window(instance, files)
    if window is None:
        return ""
    content = files[window.path]
    try:
        options = [m for m in find_mutations(content, window.path) if window.start <= m.line <= window.end]
    except SyntaxError:
        return ""
    if not options:
        return ""
    return diff_file(window.path, content, options[rng.randrange(len(options))].apply(content))


def gradings_per_task(k: int) -> int:
    """Patches `measure_split` grades per task: the greedy answer, k sampled ones (when k > 1), the empty patch and
    a random edit."""
    return 1 + (k if k > 1 else 0) + 2


def measure_split(
    cfg: Config,
    policy,
    split: str,
    *,
    k: int,
    out_dir: Path,
    limit: int | None = None,
    seed: int = 0,
    progress: Callable[[str, int], None] | None = None,
) -> SplitScores:
    """Score `policy` (a models.policy.Policy) on `split` of the current task catalog (first `limit` by id).
    `progress(text, graded)` is told what starts next, and how many patches were just graded (`gradings_per_task`
    per task in all)."""
    from evals.factory.instances import load_split, prompt_files, prompt_for
    from evals.harness import GradeCache, Prediction, run_evaluation
    from evals.prompts import extract_patch
    from models.answer import submit

    instances = sorted(load_split(cfg, split), key=lambda i: i.instance_id)[:limit]
    if not instances:
        raise ValueError(f"split {split!r} has no instances in the current task catalog")
    cache = GradeCache(cfg.home / "cache" / "grades")
    prompts = [prompt_for(cfg, inst) for inst in instances]
    name = f"{policy.name}@{policy.version}"
    errors = 0
    tell = progress or (lambda text, graded: None)

    def grade(tag: str, patches: list[str]) -> set[str]:
        nonlocal errors
        tell(f"grading {tag}", 0)
        predictions = [
            Prediction(instance_id=i.instance_id, model_name_or_path=name, model_patch=p)
            for i, p in zip(instances, patches)
        ]
        report = run_evaluation(
            instances,
            predictions,
            repos_dir=None,
            out_dir=out_dir / split / tag,
            settings=cfg.eval,
            progress=False,
            cache=cache,
        )
        errors += len(report.error_ids)
        tell(f"graded {tag}", len(instances))
        return set(report.resolved_ids)

    tell("answering greedily", 0)
    greedy = [extract_patch(g.text) for g in submit(policy, prompts, cfg.scaffold, greedy=True)]
    resolved_1 = grade("greedy", greedy)
    solved_k = set(resolved_1)
    for n in range(1, k + 1 if k > 1 else 0):
        tell(f"answering sample {n}/{k}", 0)
        sampled = [extract_patch(g.text) for g in submit(policy, prompts, cfg.scaffold, seed=seed * 1000 + n)]
        solved_k |= grade(f"sample-{n}", sampled)
    empty = grade("empty", [""] * len(instances))
    rng = random.Random(f"random-edit:{seed}:{split}")
    guesses = [random_single_edit(inst, prompt_files(inst), rng) for inst in instances]
    random_edit = grade("random-edit", guesses)
    total = len(instances)
    return SplitScores(
        split=split,
        instances=total,
        k=k,
        pass_at_1=len(resolved_1) / total,
        pass_at_k=len(solved_k) / total if k > 1 else None,
        empty=len(empty) / total,
        random_edit=len(random_edit) / total,
        well_formed=sum(1 for p in greedy if p) / total,
        errors=errors,
    )
