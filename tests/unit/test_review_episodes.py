"""The review page shows how both sides' agent episodes ended and their turns; single answers add nothing."""

from models.review import episode_lines
from models.scores import Evaluation, InstanceOutcome, SplitScores


def _scores(split, endings):
    outcomes = tuple(
        InstanceOutcome(f"i{n}", "p", resolved=o == "submitted" and n % 2 == 0, outcome=o, turns=t)
        for n, (o, t) in enumerate(endings)
    )
    return SplitScores(split=split, cache_key="k", outcomes=outcomes)


def test_outcome_mix_and_turns_of_candidate_and_champion():
    cand = _scores("indomain", [("submitted", 3), ("submitted", 5), ("budget_exhausted", 16), ("timeout", 2)])
    champ = _scores("indomain", [("submitted", 3), ("invalid_actions", 3), ("infra_error", 0), ("submitted", 4)])
    ev = Evaluation(
        decide_split="indomain",
        candidate_splits={"indomain": cand},
        champion_splits={"indomain": champ},
        champion_version="1",
        cpu_seconds=1.0,
        report_path="",
        metric_name="resolved_rate",
        notes=(),
    )
    text = "\n".join(episode_lines(ev, "2", "champion v1"))
    assert "| indomain | candidate v2 | budget exhausted 1, submitted 2, timeout 1 | 6.5 |" in text
    assert "| indomain | champion v1 | infra error 1, invalid actions 1, submitted 2 | 2.5 |" in text


def test_single_answers_add_no_episode_table():
    plain = SplitScores("indomain", "k", (InstanceOutcome("i", "p", resolved=True),))
    ev = Evaluation(
        decide_split="indomain",
        candidate_splits={"indomain": plain},
        champion_splits=None,
        champion_version=None,
        cpu_seconds=0.0,
        report_path="",
        metric_name="resolved_rate",
        notes=(),
    )
    assert episode_lines(ev, "2", "champion") == []
