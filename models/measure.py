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
    well_formed: float  # share of greedy completions that hold a patch the harness can try (an agent: that submit)
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
        options = find_mutations(content, window.path, lines=(window.start, window.end))
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
    per task in all). With `agent.enabled` the policy plays one greedy episode per task (`models.evaluate`'s, as the
    gate plays them) and `k` does not apply: pass@k is the single answer's."""
    from evals.factory.instances import load_split, prompt_for
    from evals.prompts import extract_patch
    from models.answer import submit

    instances = sorted(load_split(cfg, split), key=lambda i: i.instance_id)[:limit]
    if not instances:
        raise ValueError(f"split {split!r} has no instances in the current task catalog")
    prompts = [prompt_for(cfg, inst) for inst in instances]
    grader = _Grader(cfg, instances, f"{policy.name}@{policy.version}", out_dir / split, progress)

    if cfg.agent.enabled:
        return _episodes(cfg, policy, split, instances, grader, out_dir, seed)
    grader.tell("answering greedily", 0)
    answers = submit(policy, prompts, cfg.scaffold, greedy=True, instances=instances, harness=cfg.eval)
    greedy = [extract_patch(g.text) for g in answers]  # the scaffold ran each task's visible tests
    resolved_1 = grader.grade("greedy", greedy)
    solved_k = set(resolved_1)
    for n in range(1, k + 1 if k > 1 else 0):
        grader.tell(f"answering sample {n}/{k}", 0)
        answers = submit(policy, prompts, cfg.scaffold, seed=seed * 1000 + n, instances=instances, harness=cfg.eval)
        sampled = [extract_patch(g.text) for g in answers]
        solved_k |= grader.grade(f"sample-{n}", sampled)
    empty, random_edit = grader.chance(split, seed)
    errors = grader.errors
    total = len(instances)
    return SplitScores(
        split=split,
        instances=total,
        k=k,
        pass_at_1=len(resolved_1) / total,
        pass_at_k=len(solved_k) / total if k > 1 else None,
        empty=empty,
        random_edit=random_edit,
        well_formed=sum(1 for p in greedy if p) / total,
        errors=errors,
    )


def _episodes(
    cfg: Config, policy, split: str, instances: list, grader: _Grader, out_dir: Path, seed: int
) -> SplitScores:
    """`measure_split` of a policy that acts: pass@1 of one greedy episode per task, beside the chance baselines."""
    from models.evaluate import agent_episodes

    grader.tell("playing greedy episodes", 0)
    report = agent_episodes(cfg, policy.path, grader.name, instances, out_dir / split / "episodes")
    grader.tell("played greedy episodes", len(instances))
    grader.errors += report.outcomes.get("infra_error", 0)
    empty, random_edit = grader.chance(split, seed)
    total = len(instances)
    return SplitScores(
        split=split,
        instances=total,
        k=1,
        pass_at_1=report.resolved / total,
        pass_at_k=None,
        empty=empty,
        random_edit=random_edit,
        well_formed=report.outcomes.get("submitted", 0) / total,
        errors=grader.errors,
    )


@dataclass(frozen=True)
class ChanceScores:
    """What guessing resolves on a set of tasks: the empty patch and one random single edit each (`measure_split`'s
    baselines, alone)."""

    split: str
    instances: int
    empty: float
    random_edit: float
    errors: int

    def tags(self) -> dict[str, str]:
        """As `postgame bootstrap` tags the base version (`postgame.report.chance_from_tags` reads them back)."""
        return {
            f"bootstrap.{self.split}.instances": str(self.instances),
            f"bootstrap.{self.split}.empty": f"{self.empty:.6f}",
            f"bootstrap.{self.split}.random_edit": f"{self.random_edit:.6f}",
        }


def measure_chance(
    cfg: Config,
    split: str,
    instances: list,
    *,
    out_dir: Path,
    seed: int = 0,
    progress: Callable[[str, int], None] | None = None,
) -> ChanceScores:
    """The chance baselines of `instances` (evals.harness Instances of `split`): 2 gradings per task."""
    grader = _Grader(cfg, sorted(instances, key=lambda i: i.instance_id), "chance", out_dir / split, progress)
    empty, random_edit = grader.chance(split, seed)
    return ChanceScores(split, len(instances), empty, random_edit, grader.errors)


class _Grader:
    """Grades one patch per task of `instances` with the real harness (results under `out_dir/<tag>`, grades
    cached under home); counts infrastructure errors apart."""

    def __init__(self, cfg: Config, instances: list, name: str, out_dir: Path, progress):
        from evals.harness import GradeCache

        self.cfg, self.instances, self.name, self.out_dir = cfg, instances, name, out_dir
        self.cache = GradeCache(cfg.home / "cache" / "grades")
        self.tell: Callable[[str, int], None] = progress or (lambda text, graded: None)
        self.errors = 0

    def grade(self, tag: str, patches: list[str]) -> set[str]:
        from evals.harness import Prediction, run_evaluation

        self.tell(f"grading {tag}", 0)
        predictions = [
            Prediction(instance_id=i.instance_id, model_name_or_path=self.name, model_patch=p)
            for i, p in zip(self.instances, patches)
        ]
        report = run_evaluation(
            self.instances,
            predictions,
            repos_dir=None,
            out_dir=self.out_dir / tag,
            settings=self.cfg.eval,
            progress=False,
            cache=self.cache,
        )
        self.errors += len(report.error_ids)
        self.tell(f"graded {tag}", len(self.instances))
        return set(report.resolved_ids)

    def chance(self, split: str, seed: int) -> tuple[float, float]:
        """(empty, random single edit): the shares of the tasks each resolves."""
        from evals.factory.instances import prompt_files

        total = len(self.instances)
        empty = self.grade("empty", [""] * total)
        rng = random.Random(f"random-edit:{seed}:{split}")
        guesses = [random_single_edit(inst, prompt_files(inst), rng) for inst in self.instances]
        return len(empty) / total, len(self.grade("random-edit", guesses)) / total
