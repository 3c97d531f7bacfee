"""The review page: what a reviewer reads on a model version in the MLflow registry (its description, markdown) and
the tags MLflow's search filters on, e.g. `tags.\\`promotion.decision\\` = 'rejected'`.

    review_markdown(cfg, version, decision, evaluation, context) -> str   # pure, given its inputs
    review_tags(cfg, evaluation) -> dict[str, str]

The page: the verdict and why; candidate vs champion per split (resolve rate with a 95% Wilson interval and n), the
delta and the paired test's p-value with what it can detect at this n; every check of the gate; cost and
intelligence per dollar; what the candidate was trained on; links to the Prefect flow run and the MLflow run.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.scores import Evaluation, SplitScores
from models.stats import detectable_effect, wilson
from postgame.config import Config


@dataclass(frozen=True)
class ReviewContext:
    run_id: str
    method: str
    steps: int | None
    parent: str
    snapshot_ids: tuple[str, ...]
    dataset_sha256: str
    train_seconds: float
    records: dict[str, str]  # the training run's record counts (prompts, sft_examples, ...)
    flow_run_url: str | None
    mlflow_run_url: str | None

    @classmethod
    def for_run(
        cls,
        cfg: Config,
        run_id: str,
        *,
        method: str,
        steps: int | None,
        parent: str,
        snapshot_ids: tuple[str, ...],
        dataset_sha256: str,
        train_seconds: float,
        flow_run_id: str | None,
    ) -> ReviewContext:
        """Links and record counts looked up from the stack (the training run's params)."""
        from mlflow.exceptions import MlflowException

        from models import registry
        from postgame.runtime import resolve

        stack = resolve(cfg)
        records: dict[str, str] = {}
        mlflow_url = None
        try:
            run = registry.client(cfg).get_run(run_id)
            params = run.data.params
            records = {k: params[k] for k in ("prompts", "sft_examples", "records", "pairs") if k in params}
            if stack.tracking_uri.startswith("http"):
                mlflow_url = f"{stack.tracking_uri}/#/experiments/{run.info.experiment_id}/runs/{run_id}"
        except MlflowException:
            pass
        flow_url = None
        if flow_run_id and stack.prefect_api_url:
            flow_url = f"{stack.prefect_api_url.removesuffix('/api')}/runs/flow-run/{flow_run_id}"
        return cls(
            run_id=run_id,
            method=method,
            steps=steps,
            parent=parent,
            snapshot_ids=tuple(snapshot_ids),
            dataset_sha256=dataset_sha256,
            train_seconds=train_seconds,
            records=records,
            flow_run_url=flow_url,
            mlflow_run_url=mlflow_url,
        )


def review_tags(cfg: Config, evaluation: Evaluation) -> dict[str, str]:
    """Per-split figures as version tags (searchable), plus the headline metric the cycle report reads."""
    tags = {
        "eval.split": evaluation.decide_split,
        "eval.set_sha256": evaluation.eval_set_sha256,
        f"eval.{cfg.promote.metric}": f"{evaluation.candidate.metric:.6f}",
        "eval.instances": str(evaluation.candidate.instances),
        "eval.errors": str(evaluation.candidate.errors),
    }
    for split, s in evaluation.candidate_splits.items():
        tags.update(
            {
                f"eval.{split}.resolved_rate": f"{s.rate:.6f}",
                f"eval.{split}.n": str(s.n),
                f"eval.{split}.p2p_broken_rate": f"{s.p2p_rate:.6f}",
                f"eval.{split}.error_rate": f"{s.error_rate:.6f}",
            }
        )
    if evaluation.champion_version:
        tags["eval.champion_version"] = evaluation.champion_version
    return tags


def _rate(s: SplitScores | None) -> str:
    if s is None:
        return "—"
    if s.attempts > 1:  # K answers per instance: the interval of the instance-level rate (attempts are not independent)
        low, high = wilson(round(s.rate * s.n), s.n)
        solved = sum(o.resolved_attempts for o in s.outcomes)
        return f"**{s.rate:.1%}** ({solved}/{s.n * s.attempts} answers) <br>[{low:.1%}, {high:.1%}]"
    low, high = wilson(s.resolved, s.n)
    return f"**{s.rate:.1%}** ({s.resolved}/{s.n}) <br>[{low:.1%}, {high:.1%}]"


VERDICT = {
    "promoted": "PROMOTED to champion",
    "rejected": "REJECTED (champion unchanged)",
    "awaiting_approval": "PASSED THE GATE, awaiting a reviewer's approval",
}


def review_markdown(cfg: Config, version: str, decision, evaluation: Evaluation, context: ReviewContext) -> str:
    """The version's description, for a reviewer."""
    p = cfg.promote
    outcome = (
        "awaiting_approval"
        if decision.promote and p.require_approval
        else "promoted"
        if decision.promote
        else "rejected"
    )
    champ = evaluation.champion_splits or {}
    champ_label = f"champion v{evaluation.champion_version}" if evaluation.champion_version else "champion (none)"
    lines = [f"### v{version}: {VERDICT[outcome]}", "", f"**Why:** {decision.reason}", ""]
    if outcome == "awaiting_approval":
        lines += [
            f"Approve or reject: `postgame review approve {version} --comment '...'` (or `reject`), the "
            f"Prefect flow run's *Resume* form, or the tag `approval` = `approved` / `rejected` here.",
            "",
        ]
    lines += [f"| split | role | candidate v{version} | {champ_label} | Δ |", "| --- | --- | --- | --- | --- |"]
    for split, s in evaluation.candidate_splits.items():
        role = (
            "**decides**" if split == evaluation.decide_split else f"guard (≤ {p.guard_splits.get(split, 0):.0%} drop)"
        )
        other = champ.get(split)
        delta = f"{(s.rate - other.rate) * 100:+.1f} pts" if other is not None else "—"
        lines.append(f"| {split} | {role} | {_rate(s)} | {_rate(other)} | {delta} |")
    lines.append("")
    if decision.p_value is not None:
        n_pairs = decision.n
        mde = detectable_effect(n_pairs, alpha=p.alpha, sided=p.sided)
        power = (
            f" At n = {n_pairs} this test detects a gain of {mde * 100:.1f} points with 80% power when nothing "
            f"regresses"
            if mde is not None
            else ""
        )
        if power and decision.detectable is not None:
            power += (
                f", and {decision.detectable * 100:.1f} points at the churn measured here (the candidate loses "
                f"{decision.losses} of the {n_pairs} instances to the champion)."
            )
        elif power:
            power += "; at the churn measured here no gain is detectable."
        test = (
            f"exact sign-flip test on {p.samples} answers per instance ({p.sided}-sided, α = {p.alpha}): "
            f"{decision.wins} instances the candidate resolves more often, {decision.losses} the champion; "
            if p.samples > 1
            else f"exact McNemar ({p.sided}-sided, α = {p.alpha}): "
            f"{decision.wins} instances only the candidate resolves, {decision.losses} only the champion; "
        )
        lines += [
            f"**Paired test** on {decision.split}: {test}"
            f"Δ = {decision.delta * 100:+.1f} points, **p = {decision.p_value:.4f}**.{power}",
            "",
        ]
    lines += ["| check | result | detail |", "| --- | --- | --- |"]
    lines += [f"| {c.name} | {'pass' if c.passed else '**FAIL**'} | {c.detail} |" for c in decision.checks]
    lines.append("")
    p2p = " · ".join(f"{split} {s.p2p_rate:.1%}" for split, s in evaluation.candidate_splits.items())
    errors = " · ".join(f"{split} {s.error_rate:.1%}" for split, s in evaluation.candidate_splits.items())
    lines += [f"**Guards** — PASS_TO_PASS broken: {p2p}; infrastructure errors: {errors}.", ""]
    lines += episode_lines(evaluation, version, champ_label)
    per_dollar = ""
    if decision.delta is not None and decision.cost_usd > 0:
        per_dollar = f"; intelligence per dollar: {decision.delta * 100 / decision.cost_usd:+,.1f} points per $"
    lines += [
        f"**Cost** — training {context.train_seconds:,.0f} s + evaluation {evaluation.cpu_seconds:,.0f} CPU-s "
        f"= ${decision.cost_usd:.4f} at ${cfg.cost.usd_per_cpu_hour}/CPU-hour{per_dollar}.",
        "",
    ]
    snaps = ", ".join(f"`{s[:12]}`" for s in context.snapshot_ids) or "—"
    records = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in context.records.items()) or "—"
    steps = f", {context.steps} steps" if context.steps is not None else ""
    parent = "the base policy" if context.parent == "base" else f"v{context.parent}"
    lines += [
        f"**Trained on** — {context.method}{steps} from {parent}; snapshots {snaps}; records: "
        f"{records}; dataset `{context.dataset_sha256[:12]}`.",
        "",
    ]
    links = []
    if context.flow_run_url:
        links.append(f"[Prefect flow run]({context.flow_run_url})")
    if context.mlflow_run_url:
        links.append(f"[MLflow run]({context.mlflow_run_url})")
    links.append(f"per-instance outcomes: `runs:/{context.run_id}/eval/per_instance.json`")
    lines += ["**Links** — " + " · ".join(links)]
    for note in evaluation.notes:
        lines += ["", f"> note: {note}"]
    return "\n".join(lines) + "\n"


def episode_lines(evaluation: Evaluation, version: str, champ_label: str) -> list[str]:
    """How the agent episodes of both sides ended, and their turns, per split (nothing for single answers)."""
    rows = []
    champ = evaluation.champion_splits or {}
    for split, s in evaluation.candidate_splits.items():
        if not s.outcome_mix():
            continue
        for label, scores in ((f"candidate v{version}", s), (champ_label, champ.get(split))):
            if scores is None or not scores.outcome_mix():
                continue
            mix = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(scores.outcome_mix().items()))
            rows.append(f"| {split} | {label} | {mix} | {scores.mean_turns:.1f} |")
    if not rows:
        return []
    return [
        "**Episodes** — how each agent episode ended (submitted / budget exhausted / timeout / invalid actions / "
        "infrastructure error) and the policy's turns per episode:",
        "",
        "| split | policy | outcomes | turns / episode |",
        "| --- | --- | --- | --- |",
        *rows,
        "",
    ]


def review_section(review, stamp: str) -> str:
    """What a reviewer's verdict adds to the page."""
    verdict = "approved" if review.approve else "rejected"
    comment = f": {review.comment}" if review.comment else ""
    return f"\n**Review** — {verdict} by {review.by or 'unknown'} via {review.via} at {stamp}{comment}\n"
