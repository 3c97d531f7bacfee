"""The agent base against the single-turn base on the same instances: resolved, PASS_TO_PASS breakage, the outcome
mix, turns, tokens and serving cost per episode, beside the empty-patch and random-edit baselines.

    POSTGAME_HOME=/path/.postgame python benchmarks/bench_agent_base.py [--splits indomain eval holdout] [--limit N]
        [--agent models/base_agent] [--out DIR]

Single-turn: the shipped base answers each task once through the scaffold (models/answer.py: greedy beams, the
likeliest well-formed edit), graded by the harness. Agent: the agent base plays one greedy episode per task in the
environment (evals/agent/), its first observation the same oracle prompt, its submitted diff graded by the same
harness. Breakage: instances whose graded patch broke a PASS_TO_PASS test, over all instances of the split (an
episode that submits nothing, or ends unsubmitted, ships nothing and breaks nothing).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _single_turn(cfg, instances, out: Path) -> dict:
    from evals.factory.instances import prompt_for
    from evals.harness import GradeCache, Prediction, run_evaluation
    from evals.prompts import extract_patch
    from models.answer import submit
    from models.policy import SHIPPED_BASE, Policy

    policy = Policy(SHIPPED_BASE, name="base", version="single-turn", settings=cfg.policy)
    start = time.perf_counter()
    answers = submit(policy, [prompt_for(cfg, i) for i in instances], cfg.scaffold, greedy=True)
    preds = [
        Prediction(instance_id=i.instance_id, model_name_or_path="base", model_patch=extract_patch(a.text))
        for i, a in zip(instances, answers)
    ]
    report = run_evaluation(
        instances,
        preds,
        repos_dir=None,
        out_dir=out,
        settings=cfg.eval,
        progress=False,
        cache=GradeCache(cfg.home / "cache" / "grades"),
    )
    broken = sum(
        1
        for r in report.results.values()
        if r.patch_applied and not r.error and r.tests_status.get("PASS_TO_PASS", {}).get("failure")
    )
    return {
        "resolved": len(report.resolved_ids),
        "p2p_broken": broken,
        "errors": len(report.error_ids),
        "tokens": statistics.fmean(a.prompt_tokens + a.completion_tokens for a in answers),
        "seconds": round(time.perf_counter() - start, 1),
    }


def _agent(cfg, instances, agent_dir: Path, out: Path) -> dict:
    from evals.agent.batch import run_episodes
    from evals.factory.instances import prompt_for
    from models.agent import policy_factory

    start = time.perf_counter()
    factory = policy_factory(cfg, agent_dir, "agent-base", greedy=True)
    report = run_episodes(
        instances,
        factory,
        agent=cfg.agent,
        harness=cfg.eval,
        repos_dir=None,
        out_dir=out,
        runner=cfg.runner,
        contexts={i.instance_id: prompt_for(cfg, i) for i in instances},
    )
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    return {
        "resolved": report.resolved,
        "p2p_broken": sum(r["p2p_broken"] > 0 for r in records),
        "errors": report.outcomes["infra_error"],
        "outcomes": {k: v for k, v in report.outcomes.items() if v},
        "turns": round(report.mean_turns, 2),
        "tokens": round(report.mean_tokens, 1),
        "edits_undone": sum(
            1
            for r in records
            if sum(
                m.get("tool_calls", [{}])[0].get("function", {}).get("name") == "edit"
                for m in r["messages"]
                if m.get("tool_calls")
            )
            > 1
        ),
        "seconds": round(time.perf_counter() - start, 1),
    }


def _random_edit(cfg, instances, out: Path) -> int:
    from evals.factory.instances import prompt_files
    from evals.harness import GradeCache, Prediction, run_evaluation
    from models.measure import random_single_edit

    rng = random.Random("random-edit:0")
    preds = [
        Prediction(instance_id=i.instance_id, model_patch=random_single_edit(i, prompt_files(i), rng))
        for i in instances
    ]
    report = run_evaluation(
        instances,
        preds,
        repos_dir=None,
        out_dir=out,
        settings=cfg.eval,
        progress=False,
        cache=GradeCache(cfg.home / "cache" / "grades"),
    )
    return len(report.resolved_ids)


def main() -> None:
    from evals.factory.instances import load_split
    from postgame.config import load_config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["indomain", "eval", "holdout"])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--agent", type=Path, default=Path(__file__).resolve().parent.parent / "models" / "base_agent")
    parser.add_argument("--out", type=Path, default=Path("bench-agent-base"))
    args = parser.parse_args()
    cfg = load_config()
    rows = {}
    for split in args.splits:
        instances = sorted(load_split(cfg, split), key=lambda i: i.instance_id)[: args.limit]
        row = {
            "instances": len(instances),
            "single_turn": _single_turn(cfg, instances, args.out / split / "single"),
            "agent": _agent(cfg, instances, args.agent, args.out / split / "agent"),
            "random_edit": _random_edit(cfg, instances, args.out / split / "random"),
            "empty": 0,
        }
        rows[split] = row
        print(json.dumps({split: row}), flush=True)
    (args.out / "summary.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
