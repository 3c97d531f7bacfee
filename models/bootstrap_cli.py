"""`postgame bootstrap`: the base policy becomes the first model version and the `champion`, with its scores.

    postgame bootstrap [--from-scratch] [--k 4] [--limit N] [--json]

1. the base: with `agent.enabled` (the default) the shipped agent base `models/base_agent/`, its weights checked
   against its manifest's sha256; else the shipped `models/base/` (checked the same way; whether its content hash
   matches this machine's corpus and config is reported), else one cached or built under home (`--from-scratch`
   always rebuilds, ~1 h on 2 shared cores, and says whether it reproduced the shipped weights bit for bit);
2. its scores: pass@1 (an agent: of one greedy episode a task) and pass@k (a single answer's) on the indomain, eval
   and holdout splits beside the empty-patch and
   random-single-edit baselines (models/measure.py), and its scores on the sets promotion grades (stored in its run,
   so the first cycle compares its candidate with a measured champion without grading the base again);
3. an MLflow run `bootstrap` with those metrics, the checkpoint logged and registered as a version, tagged with its
   scores and lineage, and made `champion` when there is none yet (or the champion is an earlier base).
`policy.base_model` pointing at a local Hugging Face folder is bootstrapped the same way, without building anything.
Before measuring it prints one line: how many patches it will grade per split (tasks x gradings per task) and that
`--limit N` / `--k K` make it shorter; while it grades, a progress bar per split on stderr (only on a terminal and
without --json).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path

import typer

from models.measure import gradings_per_task
from postgame import runtime

SPLITS = ("indomain", "eval", "holdout")


def bootstrap(
    from_scratch: bool = typer.Option(
        False, "--from-scratch", help="Rebuild the base even when the shipped one matches (~1 h on 2 cores)."
    ),
    k: int = typer.Option(4, "--k", min=1, help="Sampled completions per task for pass@k (1 = greedy only)."),
    limit: int = typer.Option(0, "--limit", min=0, help="Score only the first N tasks of each split (0 = all)."),
    as_json: bool = typer.Option(
        False, "--json", help="One JSON object: run id, model URI, metrics with their baselines, cost."
    ),
) -> None:
    """Build or load the base policy, measure it, register it as the champion."""
    import mlflow

    from evals.factory.instances import load_records
    from models import registry
    from models.bootstrap import BaseResult, ensure_base, gather_inputs, read_manifest, verify_base
    from models.evaluate import graded_sets, score_sets
    from models.measure import measure_split
    from models.policy import SHIPPED_AGENT_BASE, SHIPPED_BASE, Policy
    from postgame.console import progress_bar

    cfg = runtime.current_config()
    started = time.monotonic()
    say = (lambda msg: None) if as_json else (lambda msg: typer.echo(f"  {msg}", err=True))
    # with --json, stdout carries the JSON object alone: what libraries print goes to stderr
    with contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext():
        if cfg.policy.base_model:
            path, source, content_hash, sha, same = Path(cfg.policy.base_model), "policy.base_model", "", "", None
        elif cfg.agent.enabled:  # the policy acts: the first champion is the agent base, as `make demo` registers it
            if from_scratch:
                raise typer.BadParameter(
                    "--from-scratch rebuilds the single-answer base (agent.enabled: false); the agent base is rebuilt "
                    "with `python scripts/build_agent_base.py --out DIR` (~20 min on 2 cores)",
                    param_hint="--from-scratch",
                )
            manifest = verify_base(SHIPPED_AGENT_BASE)
            base = BaseResult(str(SHIPPED_AGENT_BASE), "shipped", manifest["content_hash"], manifest["sha256"], None)
            if k > 1:
                say("agent.enabled: one greedy episode a task; pass@k is the single answer's (agent.enabled: false)")
            k = 1
        elif not from_scratch and (SHIPPED_BASE / "manifest.json").exists():
            manifest = verify_base(SHIPPED_BASE)
            here = gather_inputs(cfg).content_hash(cfg.policy)
            if here != manifest["content_hash"]:
                say(
                    f"note: the shipped base was built from inputs with content hash {manifest['content_hash'][:12]}; "
                    f"this machine's corpus and config hash to {here[:12]} (`--from-scratch` builds that one)"
                )
            base = BaseResult(
                str(SHIPPED_BASE),
                "shipped",
                manifest["content_hash"],
                manifest["sha256"],
                here == manifest["content_hash"],
            )
        else:
            base = ensure_base(cfg, from_scratch=from_scratch, say=say)
        if not cfg.policy.base_model:
            path, source, content_hash, sha, same = (
                Path(base.path),
                base.source,
                base.content_hash,
                base.sha256,
                base.matches_shipped,
            )
        say(f"base: {path} ({source})")
        tasks = {split: len(load_records(cfg, split)[: limit or None]) for split in SPLITS}
        promotion = {split: len(records) for split, records in graded_sets(cfg)[1].items()}
        say(plan_line(tasks, k, promotion))
        policy = Policy(path, name=cfg.tracking.registered_model, version="base", settings=cfg.policy)
        runtime.resolve(cfg)  # points MLflow at the stack
        mlflow.set_experiment(cfg.tracking.experiment)
        with mlflow.start_run(run_name="bootstrap") as run:
            out_dir = cfg.home / "runs" / run.info.run_id / "bootstrap"
            scores = {}
            for split in SPLITS:
                with progress_bar(split, tasks[split] * gradings_per_task(k), enabled=not as_json) as tell:
                    scores[split] = measure_split(
                        cfg,
                        policy,
                        split,
                        k=k,
                        out_dir=out_dir,
                        limit=limit or None,
                        seed=cfg.policy.seed,
                        progress=tell,
                    )
                say(scores[split].line())
            with progress_bar("promotion sets", sum(promotion.values()), enabled=not as_json) as tell:
                decide, promotion_sets = score_sets(
                    cfg, policy, run.info.run_id, out_dir / "promotion-sets", progress=tell
                )
            gate = {split: _metric(s, cfg.promote.metric) for split, s in promotion_sets.items()}
            metrics = {
                f"{split}.{key}": value
                for split, s in scores.items()
                for key, value in asdict(s).items()
                if isinstance(value, (int, float)) and value is not None
            }
            metrics |= {f"eval.{split}.{cfg.promote.metric}": value for split, value in gate.items()}
            mlflow.log_metrics(metrics)
            mlflow.log_params({"base.source": source, "base.content_hash": content_hash, "base.sha256": sha, "k": k})
            if (path / "manifest.json").exists():
                mlflow.log_dict(read_manifest(path), "base_manifest.json")
        tags = {
            "base.content_hash": content_hash,
            "base.sha256": sha,
            "eval.split": decide,
            "eval.set_sha256": promotion_sets[decide].cache_key,
            f"eval.{cfg.promote.metric}": f"{gate[decide]:.6f}",
            "eval.errors": str(promotion_sets[decide].errors),
            **{f"bootstrap.{key}": f"{value:.6f}" for key, value in metrics.items()},
        }
        version, made_champion = registry.register_base(cfg, path, run_id=run.info.run_id, tags=tags)
        champion = registry.champion_version(cfg)
    result = {
        "run_id": run.info.run_id,
        "model_uri": version.uri,
        "version": version.version,
        "champion": made_champion,
        "base": {
            "path": str(path),
            "source": source,
            "content_hash": content_hash,
            "sha256": sha,
            "matches_shipped": same,
        },
        "metrics": {split: s.to_dict() for split, s in scores.items()},
        "promotion_sets": {
            split: {cfg.promote.metric: value, "instances": promotion_sets[split].n} for split, value in gate.items()
        },
        "cost": {"seconds": round(time.monotonic() - started, 1)},
    }
    if as_json:
        typer.echo(json.dumps(result, indent=2, sort_keys=True, default=str))
        return
    for s in scores.values():
        typer.echo(s.line())
    if made_champion:
        verdict = "now champion"
    else:
        assert champion is not None  # register_base makes the base champion when there is none
        verdict = f"not champion (version {champion.version} is)"
    typer.echo(f"base registered as version {version.version}, {verdict}; run {run.info.run_id}")


def plan_line(tasks: Mapping[str, int], k: int, promotion: Mapping[str, int]) -> str:
    """What bootstrap will grade, said before it starts (on 2 cores it can run for most of an hour), and how to make
    it shorter. `tasks`: tasks measured per split (after --limit); `promotion`: instances of each promotion set."""
    each = gradings_per_task(k)
    what = "greedy" + (f" + {k} samples" if k > 1 else "") + " + empty + random-edit"
    splits = ", ".join(f"{split} {n} task{'' if n == 1 else 's'} x {each}" for split, n in tasks.items())
    sets = ", ".join(f"{split} {n}" for split, n in promotion.items())
    total = each * sum(tasks.values()) + sum(promotion.values())
    return (
        f"grading {total} patches: {splits} ({what}), then the promotion sets once ({sets}); "
        f"--limit N (tasks per split) and --k K (samples per task) make it shorter"
    )


def _metric(scores, metric: str) -> float:
    return scores.mean_reward if metric == "mean_reward" else scores.rate


def register(app: typer.Typer) -> None:
    app.command(name="bootstrap")(bootstrap)
