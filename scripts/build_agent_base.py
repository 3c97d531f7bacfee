"""Rebuild the shipped agent base (models/base_agent/): the shipped base (models/base/) taught to act in the
environment on synthetic trajectories (stage 1, models/agent_base.py), then to read code it never saw (stage 2,
models/agent_transfer.py).

    POSTGAME_HOME=.postgame OMP_NUM_THREADS=2 nice -n 10 python scripts/build_agent_base.py --out models/base_agent

Stage 1 is kept under <home>/cache/agent_base/<its content hash>/ and reused when its recipe is unchanged;
`--stage1 DIR` names a stage-1 checkpoint to reuse instead (its manifest's content hash must be the one this code
computes). `--transfer-steps 0` ships stage 1 as it is. Builds the task world first when the home has none
(held-out bugs must be known to be left out).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if TYPE_CHECKING:
    from models.agent_base import AgentBaseSettings
    from postgame.config import Config


def say(message: str) -> None:
    print(message, flush=True)


def stage1_hash(cfg: Config, base_dir: Path, settings: AgentBaseSettings) -> str:
    """The content hash stage 1 would record for this base and these settings (its build computes the same)."""
    from models.agent import COMPACT_TEMPLATE
    from models.agent_base import content_hash, trajectory_rows
    from models.tokenizer import load_tokenizer

    tok = load_tokenizer(base_dir)
    tok.chat_template = COMPACT_TEMPLATE
    rows, _ = trajectory_rows(cfg, tok, settings)
    base_sha = hashlib.sha256((base_dir / "model.safetensors").read_bytes()).hexdigest()
    return content_hash(base_sha, settings, rows).hexdigest()


def main() -> int:
    from models.agent_base import AgentBaseSettings, build_agent_base
    from models.agent_transfer import TransferSettings, build_transfer
    from models.policy import SHIPPED_BASE
    from postgame.config import load_config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--base", type=Path, default=SHIPPED_BASE, help="The base to teach (default: the shipped one).")
    parser.add_argument("--steps", type=int, default=AgentBaseSettings.steps)
    parser.add_argument("--learning-rate", type=float, default=AgentBaseSettings.learning_rate)
    parser.add_argument("--recover-share", type=float, default=AgentBaseSettings.recover_share)
    parser.add_argument("--finetune-share", type=float, default=AgentBaseSettings.finetune_share)
    parser.add_argument("--stage1", type=Path, default=None, help="A stage-1 checkpoint to reuse (hash checked).")
    parser.add_argument("--transfer-steps", type=int, default=TransferSettings.steps, help="Stage 2; 0 skips it.")
    parser.add_argument("--config", default=None)
    args = parser.parse_args()
    if args.transfer_steps < 0:
        parser.error(f"--transfer-steps {args.transfer_steps}: 0 (stage 1 only) or more")
    cfg = load_config(args.config)
    settings = AgentBaseSettings(
        steps=args.steps,
        learning_rate=args.learning_rate,
        recover_share=args.recover_share,
        finetune_share=args.finetune_share,
        precision=cfg.policy.bootstrap.precision,
    )
    expected = stage1_hash(cfg, args.base, settings)
    stage1 = args.stage1 or cfg.home / "cache" / "agent_base" / expected
    out = args.out.resolve()
    if args.transfer_steps and (out == stage1.resolve() or stage1.resolve() in out.parents):
        parser.error(f"--out {args.out}: stage 2 would write over stage 1 ({stage1}); name another folder")
    manifest = stage1 / "manifest.json"  # written last: a build cut short has none
    found = json.loads(manifest.read_text()).get("content_hash") if manifest.is_file() else None
    if found == expected:
        say(f"agent base stage 1: reusing {stage1} (content hash {expected[:12]})")
    elif args.stage1 is not None:
        print(f"--stage1 {stage1}: content hash {found} is not this recipe's {expected}", file=sys.stderr)
        return 2
    else:
        build = build_agent_base(cfg, stage1, base_dir=args.base, settings=settings, say=say)
        say(f"agent base stage 1: {build.trajectories} trajectories, {build.seconds:.0f}s (sha256 {build.sha256[:12]})")
    if args.transfer_steps == 0:
        if stage1.resolve() != out:
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(stage1, out)
        say(f"agent base: stage 1 only -> {args.out}")
        return 0
    transfer = TransferSettings(steps=args.transfer_steps, precision=cfg.policy.bootstrap.precision)
    done = build_transfer(cfg, args.out, stage1_dir=stage1, settings=transfer, say=say)
    print(
        f"agent base: stage 2 on {done.unseen_trajectories} unseen-code repairs, {done.seconds:.0f}s -> {args.out} "
        f"(sha256 {done.sha256[:12]})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
