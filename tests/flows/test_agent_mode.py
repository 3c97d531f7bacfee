"""agent.enabled on the small world's real task catalog, with the shipped agent base: evaluation grades one episode
per instance (outcome and turns kept per instance, the agent settings in the cache key), and traffic is logged as
schema-v2 trajectories that the contract accepts as they are."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

from models.evaluate import cache_key, graded_sets, score_policy
from models.policy import SHIPPED_AGENT_BASE, Policy, base_policy_dir
from postgame.contract.arrow import unknown_fields
from postgame.contract.check import check_record
from postgame.contract.trajectory import trajectory_problem
from postgame.settings.factory import SimulatorSettings


def _agent(cfg):
    # max_new_tokens: the small world's 16 cannot hold an edit block
    return cfg.model_copy(
        update={
            "agent": cfg.agent.model_copy(update={"enabled": True, "max_steps": 6}),
            "policy": cfg.policy.model_copy(update={"max_new_tokens": 128}),
            "runner": cfg.runner.model_copy(update={"kind": "thread", "workers": 2}),
        }
    )


def test_evaluation_grades_episodes_of_the_agent_base(small_world, tmp_path):
    cfg = _agent(small_world)
    assert base_policy_dir(cfg) == SHIPPED_AGENT_BASE
    decide, sets, _ = graded_sets(cfg)
    records = sets[decide][:2]
    assert cache_key(cfg, decide, records) != cache_key(small_world, decide, records)  # episodes are another grade
    policy = Policy(base_policy_dir(cfg), name="postgame-policy", version="base", settings=cfg.policy)
    scores = score_policy(cfg, policy, records, tmp_path / "eval", split=decide, key=cache_key(cfg, decide, records))
    assert scores.n == 2 and sum(scores.outcome_mix().values()) == 2 and scores.mean_turns >= 1
    assert all(o.outcome and o.turns >= 1 for o in scores.outcomes)
    lines = (tmp_path / "eval" / "trajectories.jsonl").read_text().splitlines()
    assert {json.loads(line)["instance_id"] for line in lines} == {r["instance_id"] for r in records}


def test_the_gate_samples_k_episodes_with_the_seeds_both_sides_get(small_world, tmp_path):
    # promote.samples: K for an agent is K sampled episodes per instance (it was one greedy episode, whatever K said,
    # so the paired test's power was the greedy one's): rounds with seeds of their own, and the same rounds for any
    # model graded with the same settings, as the sign-flip test on the per-instance counts assumes
    cfg = _agent(small_world)
    cfg = cfg.model_copy(
        update={
            "promote": cfg.promote.model_copy(update={"samples": 2}),
            # one worker: sampled turns seed torch's global generator, which threads would share
            "runner": cfg.runner.model_copy(update={"workers": 1}),
        }
    )
    decide, sets, _ = graded_sets(cfg)
    records = sets[decide][:2]
    policy = Policy(base_policy_dir(cfg), name="postgame-policy", version="base", settings=cfg.policy)

    def episodes(out):
        scores = score_policy(cfg, policy, records, out, split=decide, key=cache_key(cfg, decide, records))
        rounds = [
            {
                e["instance_id"]: e["messages"]
                for e in map(json.loads, (out / f"sample-{n}" / "trajectories.jsonl").read_text().splitlines())
            }
            for n in (1, 2)
        ]
        return scores, rounds

    scores, rounds = episodes(tmp_path / "a")
    assert scores.attempts == 2 and all(o.attempts == 2 and o.solved in (0, 1, 2) for o in scores.outcomes)
    assert all(o.resolved == (o.solved >= 1) and not o.error for o in scores.outcomes)
    assert all(set(r) == {rec["instance_id"] for rec in records} for r in rounds)
    assert rounds[0] != rounds[1]  # each round draws with a seed of its own
    again, rounds_again = episodes(tmp_path / "b")  # the other side of a pair: the same seeds, the same draws
    assert rounds_again == rounds and [o.solved for o in again.outcomes] == [o.solved for o in scores.outcomes]


def test_agent_traffic_is_logged_as_v2_trajectories_the_contract_accepts(small_world):
    from models.traffic import simulate_traffic
    from postgame.runtime import store

    cfg = _agent(small_world)
    # one worker: sampled turns seed torch's global generator, which threads would share
    cfg = cfg.model_copy(update={"runner": cfg.runner.model_copy(update={"workers": 1})})
    knobs = SimulatorSettings(log_prefix="agent-mode-traffic")  # not the world's log source: other tests ingest it
    # a fixed `now`: the tasks drawn (and so the episodes played) depend on it
    summary = simulate_traffic(cfg, sessions=2, settings=knobs, now=datetime(2026, 12, 1, 12, tzinfo=UTC))
    assert summary.sessions == 2
    records = [
        json.loads(line)
        for key in summary.objects
        for line in gzip.decompress(store(cfg).get(key)).decode().splitlines()
    ]
    assert len(records) == 2
    for record in records:
        assert record["schema_version"] == 2
        # no violation (it would raise); the one field beyond the contract is the documented outcome.tests_broken
        assert check_record(record) is True
        assert unknown_fields(record) == {"outcome": {"tests_broken": record["outcome"]["tests_broken"]}}
        assert trajectory_problem(record["messages"]) is None
        assert [m["role"] for m in record["messages"][:3]] == ["system", "user", "assistant"]
        assert record["usage"]["prompt_tokens"] > 0
    assert any(m.get("tool_calls") for r in records for m in r["messages"])  # the agent acted


def test_bootstrap_measures_an_agent_by_its_episodes(small_world, tmp_path):
    # `postgame bootstrap`'s per-split scores: with agent.enabled, pass@1 of one greedy episode a task (the gate's
    # episodes), no pass@k (the single answer's), beside the same chance baselines
    from models.measure import measure_split

    cfg = _agent(small_world)
    policy = Policy(base_policy_dir(cfg), name="postgame-policy", version="base", settings=cfg.policy)
    told = []
    scores = measure_split(cfg, policy, "eval", k=4, out_dir=tmp_path, limit=2, progress=lambda t, n: told.append(t))
    assert scores.instances == 2 and scores.k == 1 and scores.pass_at_k is None
    lines = (tmp_path / "eval" / "episodes" / "trajectories.jsonl").read_text().splitlines()
    episodes = [json.loads(line) for line in lines]
    assert len(episodes) == 2 and all(e["turns"] >= 1 for e in episodes)  # played, not answered once
    assert scores.pass_at_1 == sum(e["resolved"] for e in episodes) / 2
    assert scores.well_formed == sum(e["outcome"] == "submitted" for e in episodes) / 2
    assert "playing greedy episodes" in told and "answering greedily" not in told


def test_the_evaluate_stage_is_charged_what_its_workers_spent(small_world):
    # The episodes run in the runner's process pool, whose workers count in this process's CPU (RUSAGE_CHILDREN) only
    # once the pool is joined, after the evaluation returned: measured inside, an agent's evaluation was charged a few
    # CPU-s of its hundreds on the review page (`models.evaluate.charged`).
    from prefect import flow

    from models.train import Candidate, new_training_run
    from tasks.evaluate import evaluate

    cfg = _agent(small_world)
    cfg = cfg.model_copy(
        update={
            "runner": cfg.runner.model_copy(update={"kind": "process", "workers": 1}),
            # a model of its own: no champion to play against, only this candidate's episodes, on the deciding split
            "tracking": cfg.tracking.model_copy(update={"experiment": "charged", "registered_model": "charged-policy"}),
            "promote": cfg.promote.model_copy(update={"guard_splits": {}}),
        }
    )
    run_id = new_training_run(cfg, "charged")
    candidate = Candidate(run_id, "", str(SHIPPED_AGENT_BASE), "base", "sft", 0, None, 0.0, "", ())

    @flow(name="evaluate-charged")
    def stage():
        return evaluate.fn(cfg, candidate)

    evaluation = stage()
    trajectories = sorted((cfg.home / "runs" / run_id / "eval").rglob("trajectories.jsonl"))
    episodes = [json.loads(line) for path in trajectories for line in path.read_text().splitlines()]
    assert len(episodes) == sum(s.n for s in evaluation.candidate_splits.values()) > 0
    spent = sum(e["cpu_seconds"] for e in episodes)  # measured in the workers, episode by episode
    assert spent > 0 and evaluation.cpu_seconds >= spent


def test_the_gate_samples_k_single_answers_with_the_seeds_both_sides_get(small_world, tmp_path):
    # promote.samples for a policy that answers once (agent.enabled false): K sampled answers per instance, a round
    # each under sample-<n>/, the same rounds for any model graded with the same settings
    cfg = small_world.model_copy(
        update={
            "agent": small_world.agent.model_copy(update={"enabled": False}),
            "policy": small_world.policy.model_copy(update={"max_new_tokens": 64}),
            "promote": small_world.promote.model_copy(update={"samples": 2}),
            # one draw an answer, as it came: the edit check's choice among draws can pick the same edit twice
            "scaffold": small_world.scaffold.model_copy(update={"check_edits": False, "visible_tests": False}),
        }
    )
    decide, sets, _ = graded_sets(cfg)
    records = sets[decide][:2]
    policy = Policy(base_policy_dir(cfg), name="postgame-policy", version="base", settings=cfg.policy)

    def answers(out):
        scores = score_policy(cfg, policy, records, out, split=decide, key=cache_key(cfg, decide, records))
        rounds = [
            {
                rec["instance_id"]: (out / f"sample-{n}" / rec["instance_id"] / "patch.diff").read_text()
                for rec in records
            }
            for n in (1, 2)
        ]
        return scores, rounds

    scores, rounds = answers(tmp_path / "a")
    assert scores.attempts == 2 and all(o.attempts == 2 and o.solved in (0, 1, 2) for o in scores.outcomes)
    assert rounds[0] != rounds[1]  # each round draws with a seed of its own
    again, rounds_again = answers(tmp_path / "b")  # the other side of a pair: the same seeds, the same draws
    assert rounds_again == rounds and [o.solved for o in again.outcomes] == [o.solved for o in scores.outcomes]
