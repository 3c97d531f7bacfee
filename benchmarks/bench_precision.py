"""Benchmark of the base's training step on this CPU: bf16 autocast (the shipped recipe of models/base and
models/base_agent) against fp32, as a ratio in one run, and what that makes of a rebuild.

    .venv/bin/python benchmarks/bench_precision.py [--reps 8] [--threads 2]

The model is the shipped base's architecture (its config.json: a 2.56M-parameter Qwen2, randomly initialised), one AdamW step
of a batch the size the recipe uses: pre-training (`policy.bootstrap`: 8 sequences of 192 tokens) and the agent base's
trajectories (8 of up to 896; 448 here, about their mean). Interleaved, `--reps` times each after one warm-up, the
median of wall seconds. A CPU without native bfloat16 (AVX2 only: no AVX512-BF16, no AMX) runs bf16 autocast by
conversion, much slower than fp32. Prints the CPU's capability as torch reports it, the load average, and the hours a
base rebuild (8,600 steps of 8 x 192) would take each way.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def step_seconds(model, optimizer, ids, bf16: bool) -> float:
    import torch

    from models.bootstrap import training_precision

    started = time.perf_counter()
    with training_precision("bf16" if bf16 else "fp32"):
        logits = model(input_ids=ids).logits
    loss = torch.nn.functional.cross_entropy(
        logits[:, :-1].float().reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)
    )
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return time.perf_counter() - started


def main() -> int:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from models.policy import SHIPPED_BASE
    from postgame.config import PolicySettings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    p = PolicySettings()
    config = Qwen2Config.from_pretrained(SHIPPED_BASE)  # the shipped base's architecture, its weights not read
    model = Qwen2ForCausalLM(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    print(
        f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, {args.threads} threads, "
        f"{sum(q.numel() for q in model.parameters()) / 1e6:.2f}M parameters, load average {os.getloadavg()[0]:.1f}"
    )
    rows = {}
    for batch, seq in ((p.bootstrap.batch_size, p.bootstrap.seq_len), (8, 448)):
        ids = torch.randint(0, p.vocab_size, (batch, seq))
        times: dict[bool, list[float]] = {True: [], False: []}
        for bf16 in (True, False):  # warm-up
            step_seconds(model, optimizer, ids, bf16)
        for _ in range(args.reps):
            for bf16 in (True, False):
                times[bf16].append(step_seconds(model, optimizer, ids, bf16))
        bf, fp = statistics.median(times[True]), statistics.median(times[False])
        rows[seq] = (bf, fp)
        print(f"step of {batch} x {seq}: bf16 autocast {bf:.3f} s, fp32 {fp:.3f} s, bf16 / fp32 = {bf / fp:.1f}x")
    s = p.bootstrap
    steps = s.lm_steps + s.curriculum_steps + s.repair_steps
    bf, fp = rows[s.seq_len]
    print(
        f"a base rebuild ({steps} steps of {s.batch_size} x {s.seq_len}), steps alone: bf16 {steps * bf / 3600:.1f} h, "
        f"fp32 {steps * fp / 3600:.1f} h"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
