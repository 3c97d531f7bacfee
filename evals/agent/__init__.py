"""The agent environment: a coding task as a multi-turn episode of tool calls in the harness's sandbox, graded by the
harness at the end (`env`: reset/step/tools/get_reward; `workspace`: the episode's copy, its tools and the reaper;
`visible`: the tests an agent may see; `episode`: a policy's turns, trajectories in the OpenAI chat shape; `batch`:
many episodes fanned out, with their report).

    postgame agent replay --instances F.jsonl --repos DIR --script S.jsonl --out DIR
    postgame agent run --instances F.jsonl --repos DIR --policy champion --out DIR
"""

from evals.agent.env import (
    AgentEnvironment,
    EpisodeResult,
    Step,
    environment_class,
    make_environment,
    trl_environment_factory,
)

__all__ = [
    "AgentEnvironment",
    "EpisodeResult",
    "Step",
    "environment_class",
    "make_environment",
    "trl_environment_factory",
]
