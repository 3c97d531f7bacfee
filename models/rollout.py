"""GRPO in the environment: whole agent episodes as TRL rollouts, token in, token out.

    rollout = EpisodeRollout(instances, contexts, make_env, tools=schemas, ...)
    GRPOTrainer(..., rollout_func=rollout, reward_funcs=[episode_reward])

TRL hands `rollout_func` each batch's prompts, every prompt repeated `num_generations` times (the group); each entry
becomes one episode in the sandbox (`evals.agent`), on the instance its dataset row names. The policy is the model
being trained, sampled turn by turn on the growing token sequence itself: the first prompt is the chat template's
rendering of the system message and the task (the oracle prompt a single answer gets, as traffic and evaluation
give), then each turn is the tokens the model sampled (kept as sampled, not re-rendered, so what the loss scores is
what the policy saw) followed by the environment's answer as the chat template renders it (`answer_tokens`).

What comes back to TRL per episode: `prompt_ids`, `completion_ids` (every token after the prompt), `env_mask` (1 on
the model's tokens, 0 on the environment's: TRL keeps tool results out of the loss, as it does for its own tool
loop) and the fields the reward function reads. The reward is the harness's grade at submit, unchanged
(`evals.agent.env`), less `train.breakage_penalty` when the graded patch broke a PASS_TO_PASS test; an
infrastructure error is None (TRL's unscorable: its advantage is 0, never a score of 0). An episode cut by a limit
rather than ended by the policy (`budget_exhausted`, `timeout`, the context window full) is masked the same way with
`train.truncated_episodes: mask` (DeepSWE's compact filtering), or scored as the environment scores it (`score`).

Why not TRL's `environment_factory`: its tool loop reads tool calls back through the tokenizer's response schema
(`transformers.parse_response`), and the embedded base's compact template writes an `edit` call as a
SEARCH/REPLACE block that such a schema cannot describe; `rollout_func` is TRL's own hook for a custom multi-turn
rollout, and the environment, the tools and the grade are exactly those of evaluation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evals.agent.env import AgentEnvironment
from evals.agent.episode import SYSTEM_PROMPT, take_turn
from evals.harness.instance import Instance
from models.agent import render_chat as render
from postgame.settings.agent import OUTCOMES

Sampler = Callable[[list[int]], list[int]]  # token ids so far -> the turn's new token ids (up to its end token)
TRUNCATED = ("budget_exhausted", "timeout")


class TemplateError(ValueError):
    """The chat template re-renders earlier turns differently once a later message is added, so the environment's
    answer cannot be cut off as a suffix (`answer_tokens`)."""


@dataclass
class EpisodeTokens:
    """One episode as TRL trains on it, and what it was."""

    instance_id: str
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)  # 1: the model's token; 0: the environment's
    messages: list[dict[str, Any]] = field(default_factory=list)
    outcome: str = ""
    reward: float | None = None  # the environment's (the harness's grade; None: infrastructure error)
    p2p_broken: int = 0
    turns: int = 0
    context_full: bool = False

    @property
    def truncated(self) -> bool:
        """Cut by a limit rather than ended by the policy."""
        return self.context_full or self.outcome in TRUNCATED


def answer_tokens(tokenizer: Any, messages: list[dict[str, Any]], turn_end: int, tools: list[dict] | None) -> list[int]:
    """The tokens of what follows the assistant turn `messages[turn_end - 1]`: the environment's answer and the next
    generation prompt, as the chat template renders them after that turn's end token (the sampled tokens end with
    it)."""
    before = render(tokenizer, messages[:turn_end], tools, generation=False)
    full = render(tokenizer, messages, tools, generation=True)
    eos = tokenizer.eos_token or ""
    cut = before.rfind(eos) + len(eos) if eos and eos in before else len(before)
    if not full.startswith(before[:cut]):
        raise TemplateError(
            "the chat template renders the conversation differently once the tool's answer is added; a rollout "
            "needs a template whose earlier turns do not change"
        )
    return list(tokenizer(full[cut:], add_special_tokens=False)["input_ids"])


def play(
    env: AgentEnvironment,
    instance: Instance,
    sample: Sampler,
    tokenizer: Any,
    *,
    tools: list[dict] | None,
    context: str | None = None,
    max_len: int = 2048,
    max_new_tokens: int = 128,
    system_prompt: str = SYSTEM_PROMPT,
) -> EpisodeTokens:
    """Play one episode with `sample` on the token sequence itself (see the module docstring). It ends when the
    environment says so, or when the next turn would not fit in `max_len` tokens (the context window: the episode
    ends `budget_exhausted`, `context_full`)."""
    from models.agent import parse_turn

    first = env.reset(instance, context=context)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}, {"role": "user", "content": first}]
    prompt_ids = list(
        tokenizer(render(tokenizer, messages, tools, generation=True), add_special_tokens=False)["input_ids"]
    )
    ep = EpisodeTokens(instance.instance_id, prompt_ids, messages=messages)
    ids = list(prompt_ids)
    while not env.done:
        if len(ids) + max_new_tokens > max_len:
            ep.context_full = True
            env.exhaust("the policy's context window is full")
            break
        new = sample(ids)
        ep.turns += 1
        ids += new
        ep.completion_ids += new
        ep.env_mask += [1] * len(new)
        turn_end = len(messages) + 1
        take_turn(env, messages, parse_turn(tokenizer.decode(new, skip_special_tokens=True), ep.turns))
        if env.done:
            break
        answer = answer_tokens(tokenizer, messages, turn_end, tools)
        ids += answer
        ep.completion_ids += answer
        ep.env_mask += [0] * len(answer)
    if not ep.completion_ids:  # over before a turn (the sandbox could not be set up): a token to pad, none to learn
        ep.completion_ids, ep.env_mask = [tokenizer.eos_token_id], [0]
    result = env.result()
    ep.outcome, ep.reward, ep.p2p_broken = result.outcome, result.reward, result.p2p_broken
    return ep


def episode_reward_value(ep: EpisodeTokens, *, breakage_penalty: float, truncated: str) -> float | None:
    """What GRPO learns from an episode: the grade, less the breakage penalty when the patch broke a passing test;
    None (out of the loss) for an infrastructure error, and for a truncated episode with `truncated: mask`."""
    if ep.reward is None or (truncated == "mask" and ep.truncated):
        return None
    return ep.reward - breakage_penalty if ep.p2p_broken else ep.reward


def episode_reward(prompts: list[Any], completions: list[Any], episode_reward: list[float | None], **_: Any):
    """The reward function beside `EpisodeRollout`: the episode's own reward, computed when it ended."""
    return list(episode_reward)


class EpisodeRollout:
    """TRL's `rollout_func` (see the module docstring). `make_env()` gives a fresh environment per episode; the
    trainer tells it the batch's instance ids (`postgame_batch`, set from the dataset rows before generation)."""

    __name__ = "episode_rollout"

    def __init__(
        self,
        instances: Mapping[str, Instance],
        make_env: Callable[[], AgentEnvironment],
        *,
        tools: list[dict] | None,
        contexts: Mapping[str, str] | None = None,
        max_len: int = 2048,
        max_new_tokens: int = 128,
        temperature: float = 1.0,
        breakage_penalty: float = 0.0,
        truncated: str = "mask",
    ):
        self.instances, self.make_env, self.tools = dict(instances), make_env, tools
        self.contexts = dict(contexts or {})
        self.max_len, self.max_new_tokens, self.temperature = max_len, max_new_tokens, temperature
        self.breakage_penalty, self.truncated = breakage_penalty, truncated
        self.episodes: list[EpisodeTokens] = []  # this process's, newest last (what a caller may inspect or log)

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        ids = list(getattr(trainer, "postgame_batch", []))
        if len(ids) != len(prompts):
            raise ValueError(f"the rollout needs one instance id per prompt: {len(ids)} ids for {len(prompts)} prompts")
        tokenizer = trainer.processing_class
        sample = self.sampler(trainer)
        played = []
        for iid in ids:
            env = self.make_env()
            try:
                played.append(
                    play(
                        env,
                        self.instances[iid],
                        sample,
                        tokenizer,
                        tools=self.tools,
                        context=self.contexts.get(iid),
                        max_len=self.max_len,
                        max_new_tokens=self.max_new_tokens,
                    )
                )
            finally:
                env.close()
        self.episodes += played
        _log(trainer, played)
        return {
            "prompt_ids": [ep.prompt_ids for ep in played],
            "completion_ids": [ep.completion_ids for ep in played],
            "logprobs": None,  # TRL recomputes them with the model (no importance correction off vLLM)
            "env_mask": [ep.env_mask for ep in played],
            "episode_reward": [
                episode_reward_value(ep, breakage_penalty=self.breakage_penalty, truncated=self.truncated)
                for ep in played
            ],
            "episode_outcome": [ep.outcome for ep in played],
        }

    def sampler(self, trainer: Any) -> Sampler:
        """One sampled turn of the model being trained (transformers' generate on the token ids, the full
        distribution at the policy's temperature), up to and with its end token."""
        import torch

        model = trainer.accelerator.unwrap_model(trainer.model)
        tok = trainer.processing_class
        eos = tok.eos_token_id

        def sample(ids: list[int]) -> list[int]:
            x = torch.tensor([ids], device=model.device)
            with torch.no_grad():
                out = model.generate(
                    input_ids=x,
                    attention_mask=torch.ones_like(x),
                    do_sample=True,
                    temperature=self.temperature,
                    top_k=0,
                    top_p=1.0,
                    max_new_tokens=self.max_new_tokens,
                    pad_token_id=tok.pad_token_id,
                    eos_token_id=eos,
                )
            new = out[0, len(ids) :].tolist()
            return new[: new.index(eos) + 1] if eos in new else new

        return sample


def _log(trainer: Any, played: list[EpisodeTokens]) -> None:
    """The batch's outcome mix and turns, beside TRL's own metrics (averaged over the logging window)."""
    metrics = getattr(trainer, "_metrics", None)
    if metrics is None or not played:
        return
    mode = metrics["train"]
    counts = Counter(ep.outcome for ep in played)
    for outcome in OUTCOMES:
        mode[f"episodes/{outcome}"].append(counts.get(outcome, 0) / len(played))
    mode["episodes/turns"].append(sum(ep.turns for ep in played) / len(played))
    mode["episodes/resolved"].append(sum(ep.reward == 1.0 for ep in played) / len(played))
    mode["episodes/context_full"].append(sum(ep.context_full for ep in played) / len(played))
