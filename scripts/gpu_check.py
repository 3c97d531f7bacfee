"""The GPU path, checked: a few GRPO steps with vLLM (TRL `use_vllm=True`, `vllm_mode="colocate"`), generation
tokens/s for vLLM against transformers on the same model and prompts, and one agent episode whose turns vLLM
generates (models/agent.py, `policy.engine: vllm`) in the sandboxed environment (evals/agent/).

    python scripts/gpu_check.py [--model DIR] [--steps 3] [--prompts 32] [--max-new-tokens 128] [--json]

Needs a CUDA GPU and the `gpu` extra (docs/training.md "GPU"). Without them it prints `SKIP: <reason>` (with --json:
{"skipped": "<reason>"}) and exits 0, so a CPU machine can run it. Each phase runs in a child process of its own
(vLLM keeps process-wide state), which prints one JSON line; the parent prints the figures.

Model: `--model DIR` (a local Hugging Face folder), else a tiny Qwen2 built here like the embedded policy but with
head_dim 64 (vLLM's attention kernels do not take the embedded policy's head_dim of 16). Both engines generate exactly
`--max-new-tokens` tokens per prompt (EOS ignored), sampling at temperature 1.0, so tokens/s compare like for like.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def skip_reason() -> str | None:
    """Why this machine cannot run the check, or None."""
    import torch

    if not torch.cuda.is_available():
        return (
            f"no CUDA GPU here (torch {torch.__version__}, torch.cuda.is_available() is False); run it on a GPU "
            f"machine with the gpu extra installed"
        )
    if importlib.util.find_spec("vllm") is None:
        return "vllm is not installed: pip install -e '.[gpu]' (docs/training.md \"GPU\")"
    return None


def _prompts(n: int) -> list[str]:
    return [f'def function_{i}(values):\n    """Return the sum of the first {i % 7 + 1} values."""\n' for i in range(n)]


def _tiny_model(out: Path) -> Path:
    from models.policy import build_base_policy
    from postgame.config import PolicySettings
    from postgame.settings.factory import FactorySettings

    return build_base_policy(PolicySettings(hidden_size=256, num_heads=4, num_layers=2), FactorySettings(), out)


def phase_generate(model: Path, n_prompts: int, max_new_tokens: int) -> dict:
    """Generation tokens/s: transformers (batched, on the GPU) then vLLM, same prompts, same token count."""
    import torch
    from transformers import AutoModelForCausalLM

    from models.tokenizer import load_tokenizer

    prompts = _prompts(n_prompts)
    tok = load_tokenizer(model)
    tok.padding_side = "left"
    hf = AutoModelForCausalLM.from_pretrained(model, dtype=torch.bfloat16).to("cuda").eval()
    batch = tok(prompts, return_tensors="pt", padding=True).to("cuda")
    with torch.no_grad():
        hf.generate(**batch, max_new_tokens=4, do_sample=True, pad_token_id=tok.pad_token_id)  # warm-up
        torch.cuda.synchronize()
        start = time.perf_counter()
        out = hf.generate(
            **batch,
            max_new_tokens=max_new_tokens,
            min_new_tokens=max_new_tokens,
            do_sample=True,
            temperature=1.0,
            pad_token_id=tok.pad_token_id,
        )
        torch.cuda.synchronize()
    hf_s = time.perf_counter() - start
    hf_tokens = int((out.shape[1] - batch["input_ids"].shape[1]) * out.shape[0])
    del hf
    torch.cuda.empty_cache()

    from vllm import LLM, SamplingParams

    llm = LLM(model=str(model), seed=0, gpu_memory_utilization=0.3, dtype="bfloat16", enforce_eager=False)
    params = SamplingParams(max_tokens=max_new_tokens, temperature=1.0, ignore_eos=True, seed=0)
    llm.generate(prompts[:2], SamplingParams(max_tokens=4))  # warm-up
    start = time.perf_counter()
    outs = llm.generate(prompts, params)
    vllm_s = time.perf_counter() - start
    vllm_tokens = sum(len(o.outputs[0].token_ids) for o in outs)
    return {
        "prompts": n_prompts,
        "max_new_tokens": max_new_tokens,
        "transformers": {"tokens": hf_tokens, "seconds": hf_s, "tokens_per_s": hf_tokens / hf_s},
        "vllm": {"tokens": vllm_tokens, "seconds": vllm_s, "tokens_per_s": vllm_tokens / vllm_s},
        "speedup": (vllm_tokens / vllm_s) / (hf_tokens / hf_s),
    }


def phase_grpo(model: Path, steps: int, max_new_tokens: int, work: Path) -> dict:
    """A few GRPO steps with generation in a colocated vLLM engine (one GPU, one process)."""
    for key, value in {
        "RANK": "0",
        "LOCAL_RANK": "0",
        "WORLD_SIZE": "1",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "29517",
    }.items():
        os.environ.setdefault(key, value)  # colocate mode runs vLLM under torch.distributed, even on one GPU
    from models.train import TrainJob, fit
    from postgame.config import PolicySettings
    from postgame.settings.train import TrainSettings

    def varied_reward(prompts=None, completions=None, **_):
        return [float(sum(map(ord, c)) % 2) for c in completions]

    rows = [
        {"kind": "grpo", "example_id": f"grpo:{i}", "instance_id": f"p{i}", "prompt": p}
        for i, p in enumerate(_prompts(16))
    ]
    settings = TrainSettings(
        method="grpo",
        max_steps=steps,
        batch_size=8,
        num_generations=4,
        save_steps=steps,
        use_gpu=True,
        use_vllm=True,
        seed=0,
    )
    metrics: list[dict] = []
    result = fit(
        TrainJob(
            method="grpo",
            policy_dir=model,
            rows=rows,
            work_dir=work,
            settings=settings,
            policy=PolicySettings(max_new_tokens=max_new_tokens),
            reward_fn=varied_reward,
            on_metrics=lambda step, m: metrics.append({"step": step, **m}),
        )
    )
    keep = ("loss", "grad_norm", "reward_mean", "reward_std", "zero_variance_share", "completion_length")
    return {
        "steps": result.steps,
        "seconds": result.usage.wall_s,
        "gpu_seconds": result.usage.gpu_s,
        "tokens_generated": result.usage.tokens_generated,
        "per_step": [{k: m[k] for k in ("step", *keep) if k in m} for m in metrics],
    }


def phase_agent(model: Path, max_new_tokens: int, work: Path) -> dict:
    """One agent episode on a harness example instance, its turns generated by vLLM; what it cost."""
    from evals.agent import make_environment
    from evals.agent.episode import run_episode
    from evals.harness.examples import INSTANCES_FILE
    from evals.harness.examples.build import build_repos
    from evals.harness.instance import load_instances
    from models.agent import ChatPolicy
    from postgame.config import PolicySettings
    from postgame.settings.agent import AgentSettings
    from postgame.settings.harness import HarnessSettings

    repos = work / "repos"
    build_repos(repos)
    instance = load_instances(INSTANCES_FILE)[0]
    policy = ChatPolicy(model, settings=PolicySettings(engine="vllm"), name="gpu-check", max_new_tokens=max_new_tokens)
    env = make_environment(AgentSettings(max_steps=6), HarnessSettings(), repos_dir=repos)
    start = time.perf_counter()
    traj = run_episode(env, instance, policy)
    return {
        "instance": instance.instance_id,
        "outcome": traj.result.outcome,
        "reward": traj.result.reward,
        "turns": traj.turns,
        "prompt_tokens": traj.prompt_tokens,
        "completion_tokens": traj.completion_tokens,
        "seconds": round(time.perf_counter() - start, 2),
    }


def _child(phase: str, args: argparse.Namespace, model: Path, work: Path) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--phase",
        phase,
        "--model",
        str(model),
        "--steps",
        str(args.steps),
        "--prompts",
        str(args.prompts),
        "--max-new-tokens",
        str(args.max_new_tokens),
        "--work",
        str(work),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"error": f"phase {phase} exited {proc.returncode}", "stderr_tail": proc.stderr[-3000:]}
    return json.loads(lines[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="A local Hugging Face model folder.")
    parser.add_argument("--steps", type=int, default=3, help="GRPO steps with vLLM.")
    parser.add_argument("--prompts", type=int, default=32, help="Prompts for the tokens/s comparison.")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--timeout", type=int, default=900, help="Seconds per phase.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    parser.add_argument("--phase", choices=["generate", "grpo", "agent"], help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    reason = skip_reason()
    if reason:
        print(json.dumps({"skipped": reason}) if args.json else f"SKIP: {reason}")
        return 0
    if args.phase == "generate":
        print(json.dumps(phase_generate(args.model, args.prompts, args.max_new_tokens)))
        return 0
    if args.phase == "grpo":
        print(json.dumps(phase_grpo(args.model, args.steps, args.max_new_tokens, args.work)))
        return 0
    if args.phase == "agent":
        print(json.dumps(phase_agent(args.model, args.max_new_tokens, args.work)))
        return 0

    with tempfile.TemporaryDirectory(prefix="postgame-gpu-check-") as tmp:
        model = args.model or _tiny_model(Path(tmp) / "model")
        import torch

        report = {
            "device": torch.cuda.get_device_name(0),
            "torch": torch.__version__,
            "vllm": __import__("vllm").__version__,
            "model": str(args.model or "tiny Qwen2 (built here)"),
            "generate": _child("generate", args, model, Path(tmp) / "gen"),
            "grpo_vllm": _child("grpo", args, model, Path(tmp) / "grpo"),
            "agent_vllm": _child("agent", args, model, Path(tmp) / "agent"),
        }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        gen, grpo = report["generate"], report["grpo_vllm"]
        print(f"device {report['device']}, torch {report['torch']}, vllm {report['vllm']}, model {report['model']}")
        if "error" in gen:
            print(f"generation: {gen['error']}\n{gen['stderr_tail']}")
        else:
            print(
                f"generation ({gen['prompts']} prompts x {gen['max_new_tokens']} tokens): transformers "
                f"{gen['transformers']['tokens_per_s']:.0f} tok/s, vLLM {gen['vllm']['tokens_per_s']:.0f} tok/s "
                f"({gen['speedup']:.1f}x)"
            )
        if "error" in grpo:
            print(f"GRPO with vLLM: {grpo['error']}\n{grpo['stderr_tail']}")
        else:
            print(f"GRPO with vLLM (colocate): {grpo['steps']} steps in {grpo['seconds']:.1f} s")
            for m in grpo["per_step"]:
                print("  " + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in m.items()))
        agent = report["agent_vllm"]
        if "error" in agent:
            print(f"agent episode with vLLM: {agent['error']}\n{agent['stderr_tail']}")
        else:
            print(
                f"agent episode with vLLM on {agent['instance']}: {agent['outcome']} after {agent['turns']} turns, "
                f"{agent['prompt_tokens'] + agent['completion_tokens']} tokens, {agent['seconds']:.1f} s"
            )
    failed = any("error" in report[k] for k in ("generate", "grpo_vllm", "agent_vllm"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
