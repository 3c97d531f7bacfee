"""Each training mode takes real TRL steps on the tiny base policy: finite loss, a non-zero gradient, changed weights.

GRPO uses a plain Python reward that varies across a group (the harness reward has its own test,
test_train_harness_reward.py), so the batch has reward variance and the update is not a no-op.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from models.train import TRAINERS, TrainJob, choose_method, fit, get_trainer, step_progress
from postgame.config import PolicySettings
from postgame.errors import ConfigError
from postgame.settings.train import LoraSettings, TrainSettings
from tests.support import make_config

POLICY = PolicySettings(max_new_tokens=8)


def rows(kind: str, n: int = 4) -> list[dict]:
    return [
        {
            "kind": kind,
            "example_id": f"{kind}:{i}",
            "instance_id": f"t{i}",
            "prompt": f"def f{i}(x):\n    return x",
            "completion": f" + {i}\n",
            "chosen": f" + {i}\n",
            "rejected": f" - {i} * 2\n",
            "variance": 0.25,
        }
        for i in range(n)
    ]


def varying_reward(prompts=None, completions=None, **_columns) -> list[float]:
    """Deterministic and different across a group of sampled completions."""
    return [float(sum(map(ord, c)) % 2) for c in completions]


def weights(path):
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


def run(method: str, base, tmp_path, **settings) -> tuple:
    steps: list[tuple[int, dict]] = []
    values = dict(method=method, max_steps=2, batch_size=4, num_generations=2, save_steps=10, seed=3)
    values.update(settings)
    result = fit(
        TrainJob(
            method=method,
            policy_dir=base,
            rows=rows(method),
            work_dir=tmp_path / method,
            settings=TrainSettings(**values),
            policy=POLICY,
            reward_fn=varying_reward,
            on_metrics=lambda step, m: steps.append((step, m)),
        )
    )
    return result, steps


def sft_job(base, tmp_path, max_steps: int, *callbacks, data: list[dict] | None = None, policy=POLICY) -> TrainJob:
    """A small SFT job on the fixture rows (or `data`) with these trainer callbacks."""
    return TrainJob(
        method="sft",
        policy_dir=base,
        rows=data or rows("sft"),
        work_dir=tmp_path / "sft",
        settings=TrainSettings(
            method="sft", max_steps=max_steps, batch_size=2, num_generations=2, save_steps=10, seed=3
        ),
        policy=policy,
        callbacks=callbacks,
    )


@pytest.mark.parametrize("method", ["sft", "dpo", "grpo"])
def test_mode_takes_steps_with_finite_loss_and_a_gradient(method, base_policy, tmp_path):
    result, steps = run(method, base_policy, tmp_path)
    assert result.steps == 2 and [s for s, _ in steps] == [1, 2]
    for _step, m in steps:
        assert math.isfinite(m["loss"]) and m["grad_norm"] > 0 and m["learning_rate"] > 0
    if method == "grpo":
        assert steps[0][1]["reward_std"] > 0  # the batch has reward variance
        assert 0 <= steps[0][1]["zero_variance_share"] < 1 and steps[0][1]["completion_length"] > 0
        assert result.usage.tokens_generated > 0
    assert result.usage.tokens_trained > 0 and result.usage.wall_s > 0
    before, after = weights(base_policy), weights(Path(result.output_dir))
    assert any(not (before[k] == after[k]).all() for k in before), "training changed no weight"


def test_step_progress_tells_each_step_out_of_max_steps(base_policy, tmp_path):
    """`postgame train` draws its bar out of train.max_steps: the callback advances it one step at each step's end."""
    told: list[tuple[str, int]] = []
    fit(sft_job(base_policy, tmp_path, 3, step_progress(lambda text, done: told.append((text, done)), 3)))
    assert told == [("step 1/3", 1), ("step 2/3", 1), ("step 3/3", 1)]


def test_dpo_adds_the_chosen_answers_nll_by_its_weight(base_policy, tmp_path):
    # At step 1 the policy is its own reference: DPO's loss is exactly log 2; the NLL term adds the chosen answer's
    # mean token loss on top (8.2 nats on these toy rows for the base).
    _, pure = run("dpo", base_policy, tmp_path / "pure", dpo_sft_weight=0.0)
    _, mixed = run("dpo", base_policy, tmp_path / "mixed", dpo_sft_weight=1.0)
    assert pure[0][1]["loss"] == pytest.approx(math.log(2), abs=1e-3)
    assert mixed[0][1]["loss"] - math.log(2) > 1.0, mixed[0][1]["loss"]


def test_lora_trains_adapters_and_saves_a_merged_model(base_policy, tmp_path):
    result, steps = run(
        "sft", base_policy, tmp_path, lora=LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"])
    )
    assert all(math.isfinite(m["loss"]) and m["grad_norm"] > 0 for _, m in steps)
    before, after = weights(base_policy), weights(Path(result.output_dir))
    assert after.keys() == before.keys()  # merged: a plain checkpoint, no adapter tensors
    changed = {k for k in before if not (before[k] == after[k]).all()}
    assert changed and all("q_proj" in k or "v_proj" in k for k in changed)


def test_unknown_trainer_names_the_valid_ones():
    with pytest.raises(KeyError, match="valid names: dpo, grpo, sft, auto"):
        get_trainer("ppo")
    assert set(TRAINERS) == {"sft", "dpo", "grpo"}


def test_auto_picks_by_what_the_data_holds():
    s = TrainSettings(batch_size=2, num_generations=2)
    flat = [dict(r, variance=0.0) for r in rows("grpo")]
    assert choose_method(s, rows("dpo", 2) + rows("sft", 2) + rows("grpo")) == "sft"  # verified answers first
    assert choose_method(s, rows("dpo", 2) + rows("sft", 1) + rows("grpo")) == "dpo"
    assert choose_method(s, rows("dpo", 1) + rows("sft", 1) + rows("grpo")) == "grpo"  # outcomes vary
    assert choose_method(s, rows("sft", 1) + flat) == "grpo"
    assert choose_method(TrainSettings(method="sft"), flat) == "sft"


def test_bad_train_settings_fail_at_load(tmp_path):
    with pytest.raises(ConfigError, match=r"train.lora.r = 0"):
        make_config(tmp_path, train={"lora": {"r": 0}})
    with pytest.raises(ConfigError, match="train.method = 'ppo'"):
        make_config(tmp_path, train={"method": "ppo"})
    with pytest.raises(ConfigError, match="use_vllm=true needs train.use_gpu"):
        make_config(tmp_path, train={"use_vllm": True})


def test_training_on_the_cpu_steps_in_fp32_unless_asked_for_bf16(base_policy, tmp_path):
    """TRL's configs default to bf16=True even with use_cpu, and a CPU without native bfloat16 runs it ~14x slower:
    the trainer gets train.precision (auto = bf16 on a GPU only)."""
    # checked: fails when fit() leaves bf16 to TRL's default (the trainer's args say bf16=True)
    from transformers import TrainerCallback

    seen: list[bool] = []

    class Precision(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            seen.append(args.bf16)

    fit(sft_job(base_policy, tmp_path, 1, Precision()))
    assert seen == [False]
    assert TrainSettings().bf16() is False and TrainSettings(use_gpu=True).bf16() is True
    assert (
        TrainSettings(precision="bf16").bf16() is True and TrainSettings(use_gpu=True, precision="fp32").bf16() is False
    )


def test_sft_learns_each_answer_from_the_prompt_the_policy_reads(base_policy, tmp_path):
    """The policy reads the last policy.max_prompt_tokens tokens of a prompt and writes its answer as tokens of their
    own: the trainer sees exactly those ids, the loss on the answer and EOS only. Left to TRL, a candidate learned
    from whole prompts (up to 600 tokens for a 320-token policy), a context it never answers from."""
    # checked: fails when fit() hands TRL the rows' text (TRL tokenises the whole prompt)
    from transformers import TrainerCallback

    from models.tokenizer import load_tokenizer

    seen: list[dict] = []

    class Data(TrainerCallback):
        def on_train_begin(self, args, state, control, train_dataloader=None, **kwargs):
            seen.extend(train_dataloader.dataset)

    long = [{**row, "prompt": "# " + "word " * 40 + row["prompt"]} for row in rows("sft")]
    policy = PolicySettings(max_new_tokens=8, max_prompt_tokens=12)
    fit(sft_job(base_policy, tmp_path, 1, Data(), data=long, policy=policy))
    tok = load_tokenizer(base_policy)
    assert seen
    for example in seen:  # the step's batch
        row = next(r for r in long if r["example_id"] == example["example_id"])
        cut = tok(row["prompt"], truncation=True, max_length=12)["input_ids"]  # as Policy.generate reads it
        answer = tok(row["completion"], add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        assert example["input_ids"] == cut + answer
        assert [t for t in example["labels"] if t != -100] == answer


def test_dpo_and_grpo_read_the_prompt_cut_as_the_policy_reads_it(base_policy, tmp_path):
    """DPO's pairs and GRPO's prompts are cut to the policy's last max_prompt_tokens tokens, as SFT's are."""
    # checked: fails when pair_features or cut_prompts keep the whole prompt
    from transformers import TrainerCallback

    from models.tokenizer import load_tokenizer

    tok = load_tokenizer(base_policy)
    policy = PolicySettings(max_new_tokens=8, max_prompt_tokens=12)
    seen: list[dict] = []

    class Data(TrainerCallback):
        def on_train_begin(self, args, state, control, train_dataloader=None, **kwargs):
            seen.extend(train_dataloader.dataset)

    graded: list[str] = []  # the prompts GRPO's reward is shown: the ones its completions were sampled from

    def reward(prompts=None, completions=None, **columns):
        graded.extend(prompts)
        return varying_reward(prompts, completions)

    for method in ("dpo", "grpo"):
        long = [{**row, "prompt": "# " + "word " * 40 + row["prompt"]} for row in rows(method)]
        settings = TrainSettings(method=method, max_steps=1, batch_size=2, num_generations=2, save_steps=10, seed=3)
        fit(
            TrainJob(
                method=method,
                policy_dir=base_policy,
                rows=long,
                work_dir=tmp_path / method,
                settings=settings,
                policy=policy,
                reward_fn=reward,
                callbacks=(Data(),) if method == "dpo" else (),
            )
        )
        cuts = {r["example_id"]: tok(r["prompt"], truncation=True, max_length=12)["input_ids"] for r in long}
        if method == "dpo":
            assert seen
            for example in seen:
                row = next(r for r in long if r["example_id"] == example["example_id"])
                assert example["prompt_ids"] == cuts[row["example_id"]]
                assert example["chosen_ids"] == tok(row["chosen"], add_special_tokens=False)["input_ids"] + [
                    tok.eos_token_id
                ]
        else:
            assert graded and set(graded) <= {tok.decode(c) for c in cuts.values()}
