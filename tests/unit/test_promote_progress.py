"""`postgame promote` draws its bar out of `evaluation_size`: the candidate's and the champion's gradings of every
promotion set, told by `evaluate_policy(progress=)` as each set is done, so that the bar ends at its total. Scores
already stored (a re-run) count as graded; here every set is stored, so nothing is graded and no stack is needed."""

from __future__ import annotations

from types import SimpleNamespace

from models import evaluate, registry
from models.scores import InstanceOutcome, SplitScores

SETS = {
    "eval": [{"instance_id": f"e{i}", "repo": "acme/calc"} for i in range(3)],
    "holdout": [{"instance_id": f"h{i}", "repo": "acme/calc"} for i in range(2)],
}


def stored(split: str) -> SplitScores:
    return SplitScores(
        split, f"key-{split}", tuple(InstanceOutcome(r["instance_id"], r["repo"], True) for r in SETS[split])
    )


def test_the_bar_ends_at_its_total_and_says_whose_grading_runs(monkeypatch, cfg, tmp_path):
    monkeypatch.setattr(evaluate, "graded_sets", lambda cfg: ("eval", SETS, []))
    monkeypatch.setattr(evaluate, "cache_key", lambda cfg, split, records: f"key-{split}")
    monkeypatch.setattr(registry, "load_scores", lambda cfg, run_id, key: stored(key.removeprefix("key-")))
    monkeypatch.setattr(registry, "champion_version", lambda cfg: SimpleNamespace(version="1", run_id="c", name="m"))
    monkeypatch.setattr(registry, "log_evaluation", lambda cfg, run_id, evaluation: None)
    told: list[tuple[str, int]] = []
    evaluate.evaluate_policy(cfg, None, "candidate-run", tmp_path, progress=lambda t, n: told.append((t, n)))
    assert sum(n for _, n in told) == evaluate.evaluation_size(cfg) == 2 * (3 + 2)
    assert [t for t, _ in told] == [
        "candidate: graded eval",
        "candidate: graded holdout",
        "champion: graded eval",
        "champion: graded holdout",
    ]
    assert evaluate.evaluation_size(cfg, exclude_version="1") == 5  # `--version 1` is not graded against itself
