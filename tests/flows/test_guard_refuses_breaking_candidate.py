"""Issue 21: a candidate trained on trajectories that break passing tests is refused by the PASS_TO_PASS guard — a real
model, SFT through TRL from the agent base, scored by real episodes in the sandbox, judged by the gate itself.

Curate never hands such trajectories to SFT (tests/unit/test_curate.py); this is the line behind it: whatever a
candidate learned, breakage the harness measures stops it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from evals.agent.batch import run_episodes
from evals.agent.episode import ScriptedPolicy
from evals.factory.instances import prompt_files, prompt_for
from models.evaluate import _instances, cache_key, graded_sets, score_policy
from models.policy import SHIPPED_AGENT_BASE, Policy
from models.promote import decide
from models.train import TrainJob, _tool_schemas, fit

TOP_LEVEL = re.compile(r"^(?:def|class|import|from) .*$", re.M)


def _breaking_calls(instance) -> list[dict]:
    """Edit the file the task shows: a module-level raise before its first unique top-level line (every test that
    imports it fails, the passing ones too), then submit."""
    path, text = next(iter(prompt_files(instance).items()))
    line = next(m.group(0) for m in TOP_LEVEL.finditer(text) if text.count(m.group(0)) == 1) + "\n"
    edit = {"path": path, "search": line, "replace": 'raise RuntimeError("broken")\n' + line}
    return [{"tool": "edit", "args": edit}, {"tool": "submit", "args": {}}]


def test_a_candidate_trained_on_breaking_trajectories_is_refused_by_the_guard(small_world, tmp_path):
    # review_on_submit off: the scaffold's own check would refuse these submits; the guard must stand without it
    cfg = small_world.model_copy(
        update={
            "agent": small_world.agent.model_copy(update={"enabled": True, "max_steps": 6, "review_on_submit": False}),
            "policy": small_world.policy.model_copy(update={"max_new_tokens": 128}),
            "runner": small_world.runner.model_copy(update={"kind": "thread", "workers": 2}),
        }
    )
    split, sets, _ = graded_sets(cfg)
    records = sets[split]
    instances = _instances(cfg, records)
    contexts = {i.instance_id: prompt_for(cfg, i) for i in instances}

    # the trajectories: played in the environment, each breaking the passing tests
    scripts = {i.instance_id: _breaking_calls(i) for i in instances}
    played = run_episodes(
        instances,
        lambda inst: ScriptedPolicy(scripts[inst.instance_id]),
        agent=cfg.agent,
        harness=cfg.eval,
        repos_dir=None,
        out_dir=tmp_path / "scripted",
        runner=cfg.runner,
        contexts=contexts,
    )
    assert all(ep["outcome"] == "submitted" and ep["p2p_broken"] for ep in played.instances.values())
    trajectories = [
        json.loads(line) for line in (tmp_path / "scripted" / "trajectories.jsonl").read_text().splitlines()
    ]
    rows = [
        {"example_id": f"sft:{n}", "instance_id": t["instance_id"], "kind": "sft", "messages": t["messages"]}
        for n, t in enumerate(trajectories)
    ]

    # the candidate: SFT on them from the agent base
    result = fit(
        TrainJob(
            method="sft",
            policy_dir=Path(SHIPPED_AGENT_BASE),
            rows=rows,
            work_dir=tmp_path / "train",
            # 5e-4: 16 steps at the default 1e-4 do not yet make it break what it did not break before
            settings=cfg.train.model_copy(update={"max_steps": 16, "batch_size": 2, "learning_rate": 5e-4}),
            policy=cfg.policy,
            tools=_tool_schemas(cfg),
        )
    )
    key = cache_key(cfg, split, records)
    scores = {
        who: score_policy(
            cfg,
            Policy(Path(path), name="postgame-policy", version=who, settings=cfg.policy),
            records,
            tmp_path / f"eval-{who}",
            split=split,
            key=key,
        )
        for who, path in (("base", SHIPPED_AGENT_BASE), ("candidate", result.output_dir))
    }
    assert scores["candidate"].p2p_share > scores["base"].p2p_share  # it learned to break

    decision = decide({split: scores["candidate"]}, {split: scores["base"]}, cfg.promote, split=split)
    assert not decision.promote and "p2p" in decision.failed
    # and the guard alone refuses it: waive the gain's margin, its significance and the error rate, and p2p still fails
    lenient = cfg.promote.model_copy(update={"alpha": 1.0, "min_improvement": -2.0, "max_error_rate": 1.0})
    decision = decide({split: scores["candidate"]}, {split: scores["base"]}, lenient, split=split)
    assert not decision.promote and decision.failed == ["p2p"]
    (check,) = [c for c in decision.checks if c.name == "p2p"]
    assert check.value > cfg.promote.max_p2p_increase and "PASS_TO_PASS breakage" in check.detail
