"""A training killed with SIGKILL and run again resumes from its last checkpoint and neither skips nor repeats an
example (NeMo RL PR #3599: ~30% of prompts silently skipped across save/restore with non-atomic checkpoints).

The training runs in a child process (forked, so it need not import torch again on a busy machine) that kills itself
with a real SIGKILL: first after step 3 (checkpoint 2 is on disk, step 3 is trained and lost), then in the middle of
writing checkpoint 4 (the files are staged, the rename has not happened). The third run completes. The example ids
each step consumed and the final weights must equal an uninterrupted run's.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path

import pytest

from models import checkpoints
from postgame.config import PolicySettings
from postgame.settings.train import TrainSettings

ROWS = [
    {
        "kind": "sft",
        "example_id": f"sft:t{i}",
        "instance_id": f"t{i}",
        "prompt": f"def f{i}(x):\n    return x",
        "completion": f" + {i}\n",
    }
    for i in range(5)
]  # 5 rows, 2 a step, 6 steps: the plan crosses epochs
SETTINGS = TrainSettings(
    method="sft", max_steps=6, batch_size=2, num_generations=2, save_steps=2, seed=7, keep_checkpoints=3
)


def _train(base: Path, work: Path, kill: str | None) -> None:
    """The training task; `kill` = "step:N" (SIGKILL after step N) or "save:N" (SIGKILL while writing checkpoint N)."""
    import torch
    from transformers import TrainerCallback

    from models import train

    torch.set_num_threads(1)
    callbacks = []
    if kill and kill.startswith("step:"):
        at = int(kill.split(":")[1])

        class KillAfterStep(TrainerCallback):
            def on_step_end(self, args, state, control, **kwargs):
                if state.global_step == at:
                    os.kill(os.getpid(), signal.SIGKILL)

        callbacks.append(KillAfterStep())
    if kill and kill.startswith("save:"):
        at = int(kill.split(":")[1])
        publish = checkpoints.publish

        def publish_then_die(staged, final, manifest=None):
            if final.name == f"checkpoint-{at}":
                (staged / checkpoints.MANIFEST).write_text(manifest.to_json() if manifest else "{}")
                os.kill(os.getpid(), signal.SIGKILL)  # staged and even its manifest written, never renamed
            return publish(staged, final, manifest)

        checkpoints.publish = publish_then_die
    train.fit(
        train.TrainJob(
            method="sft",
            policy_dir=base,
            rows=ROWS,
            work_dir=work,
            settings=SETTINGS,
            policy=PolicySettings(),
            callbacks=callbacks,
        )
    )


def _run_child(base: Path, work: Path, kill: str | None) -> int:
    process = multiprocessing.get_context("fork").Process(target=_train, args=(base, work, kill))
    process.start()
    process.join(timeout=300)
    assert not process.is_alive(), "the training child hung"
    return process.exitcode


def _weights(model_dir: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(model_dir / "model.safetensors"))


def test_sigkilled_training_resumes_without_skipping_or_repeating(base_policy, tmp_path):
    from models.train import TrainResult

    killed = tmp_path / "killed"
    assert _run_child(base_policy, killed, "step:3") == -signal.SIGKILL
    assert [step for step, _ in checkpoints.complete(killed / "checkpoints")] == [2]

    assert _run_child(base_policy, killed, "save:4") == -signal.SIGKILL
    assert (killed / "checkpoints" / checkpoints.STAGING / "checkpoint-4").exists()  # the half-written one
    assert [step for step, _ in checkpoints.complete(killed / "checkpoints")] == [2]

    assert _run_child(base_policy, killed, None) == 0
    resumed = TrainResult.from_json((killed / "train_result.json").read_text())

    straight = tmp_path / "straight"
    assert _run_child(base_policy, straight, None) == 0
    uninterrupted = TrainResult.from_json((straight / "train_result.json").read_text())

    assert resumed.resumed_from_step == 2 and uninterrupted.resumed_from_step == 0
    assert resumed.steps == uninterrupted.steps == 6
    assert resumed.seen == uninterrupted.seen  # the same ids, step by step: no skip, no repeat
    flat = [i for ids in resumed.seen for i in ids]
    assert len(flat) == 12 and all(flat.count(r["example_id"]) in (2, 3) for r in ROWS)
    a, b = _weights(Path(resumed.output_dir)), _weights(Path(uninterrupted.output_dir))
    assert a.keys() == b.keys()
    different = [k for k in a if not (a[k] == b[k]).all()]
    assert not different, f"weights differ after resume: {different[:3]}"


def test_checkpoint_of_another_data_order_is_refused(base_policy, tmp_path):
    from models.train import TrainJob, fit

    work = tmp_path / "w"
    assert _run_child(base_policy, work, "step:3") == -signal.SIGKILL
    other = [dict(r, example_id=r["example_id"] + "-x") for r in ROWS]
    with pytest.raises(checkpoints.CheckpointError, match="another data order"):
        fit(TrainJob(method="sft", policy_dir=base_policy, rows=other, work_dir=work, settings=SETTINGS))
