"""The agent base against the single-turn base on the same instances: resolved, PASS_TO_PASS breakage, the outcome
mix, turns, tokens and serving cost per episode, beside the empty-patch and random-edit baselines.

    POSTGAME_HOME=/path/.postgame python benchmarks/bench_agent_base.py [--splits indomain eval holdout] [--limit N]
        [--agent models/base_agent] [--out DIR]

Single-turn: the shipped base answers each task once through the product's scaffold (models/answer.py: greedy
beams, the likeliest well-formed edit; with `scaffold.visible_tests`, the default, the first that breaks no visible
test), graded by the harness. `POSTGAME_SCAFFOLD__VISIBLE_TESTS=false` / `POSTGAME_AGENT__REVIEW_ON_SUBMIT=false`
measure either side without its check; `--sides single|agent` plays one. Agent: the agent base plays one greedy episode per task in the
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


def _grade(cfg, instances, patches: list[str], out: Path):
    """The harness's report on one patch per instance (grades cached under home, as evaluation caches them)."""
    from evals.harness import GradeCache, Prediction, run_evaluation

    preds = [Prediction(instance_id=i.instance_id, model_patch=p) for i, p in zip(instances, patches)]
    return run_evaluation(
        instances,
        preds,
        repos_dir=None,
        out_dir=out,
        settings=cfg.eval,
        progress=False,
        cache=GradeCache(cfg.home / "cache" / "grades"),
    )


def _single_turn(cfg, instances, out: Path) -> dict:
    from evals.factory.instances import prompt_for
    from evals.prompts import extract_patch
    from models.answer import submit
    from models.evaluate import outcome_of
    from models.policy import SHIPPED_BASE, Policy

    policy = Policy(SHIPPED_BASE, name="base", version="single-turn", settings=cfg.policy)
    start = time.perf_counter()
    # the product's scaffold: with scaffold.visible_tests (the default) the first beam that breaks no visible test
    answers = submit(
        policy,
        [prompt_for(cfg, i) for i in instances],
        cfg.scaffold,
        instances=instances,
        harness=cfg.eval,
        greedy=True,
    )
    report = _grade(cfg, instances, [extract_patch(a.text) for a in answers], out)
    return {
        "resolved": len(report.resolved_ids),
        "p2p_broken": sum(outcome_of(r, "").p2p_broken for r in report.results.values()),
        "errors": len(report.error_ids),
        "tokens": statistics.fmean(a.prompt_tokens + a.completion_tokens for a in answers),
        "seconds": round(time.perf_counter() - start, 1),
    }


def _agent(cfg, instances, agent_dir: Path, out: Path) -> dict:
    from models.evaluate import agent_episodes

    start = time.perf_counter()
    report = agent_episodes(cfg, agent_dir, "agent-base", instances, out)
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    edits = [
        sum(c["function"]["name"] == "edit" for m in r["messages"] for c in m.get("tool_calls") or []) for r in records
    ]
    return {
        "resolved": report.resolved,
        "p2p_broken": report.p2p_breaking,
        "errors": report.outcomes["infra_error"],
        "outcomes": {k: v for k, v in report.outcomes.items() if v},
        "turns": round(report.mean_turns, 2),
        "tokens": round(report.mean_tokens, 1),
        "episodes_with_several_edits": sum(n > 1 for n in edits),
        "seconds": round(time.perf_counter() - start, 1),
    }


def _random_edit(cfg, instances, out: Path) -> int:
    from evals.factory.instances import prompt_files
    from models.measure import random_single_edit

    rng = random.Random("random-edit:0")
    return len(
        _grade(cfg, instances, [random_single_edit(i, prompt_files(i), rng) for i in instances], out).resolved_ids
    )


def main() -> None:
    from evals.factory.instances import load_split
    from postgame.config import load_config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", nargs="+", default=["indomain", "eval", "holdout"])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--agent", type=Path, default=Path(__file__).resolve().parent.parent / "models" / "base_agent")
    parser.add_argument("--out", type=Path, default=Path("bench-agent-base"))
    parser.add_argument("--sides", default="single,agent", help="which policies play: single, agent or both")
    args = parser.parse_args()
    cfg = load_config()
    rows = {}
    for split in args.splits:
        instances = sorted(load_split(cfg, split), key=lambda i: i.instance_id)[: args.limit]
        sides = ["single", "agent"] if args.sides == "both" else args.sides.split(",")
        row = {
            "instances": len(instances),
            "scaffold_visible_tests": cfg.scaffold.visible_tests,
            "review_on_submit": cfg.agent.review_on_submit,
            "single_turn": _single_turn(cfg, instances, args.out / split / "single") if "single" in sides else None,
            "agent": _agent(cfg, instances, args.agent, args.out / split / "agent") if "agent" in sides else None,
            "random_edit": _random_edit(cfg, instances, args.out / split / "random"),
            "empty": 0,
        }
        rows[split] = row
        print(json.dumps({split: row}), flush=True)
    (args.out / "summary.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
