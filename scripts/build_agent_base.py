"""Rebuild the shipped agent base (models/base_agent/): the shipped base (models/base/) taught to act in the
environment on synthetic trajectories. See models/agent_base.py for the recipe.

    POSTGAME_HOME=.postgame OMP_NUM_THREADS=2 nice -n 10 python scripts/build_agent_base.py --out models/base_agent

Builds the task world first when the home has none (held-out bugs must be known to be left out).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    from models.agent_base import AgentBaseSettings, build_agent_base
    from models.policy import SHIPPED_BASE
    from postgame.config import load_config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--base", type=Path, default=SHIPPED_BASE, help="The base to teach (default: the shipped one).")
    parser.add_argument("--steps", type=int, default=AgentBaseSettings.steps)
    parser.add_argument("--learning-rate", type=float, default=AgentBaseSettings.learning_rate)
    parser.add_argument("--recover-share", type=float, default=AgentBaseSettings.recover_share)
    parser.add_argument("--finetune-share", type=float, default=AgentBaseSettings.finetune_share)
    parser.add_argument("--config", default=None)
    args = parser.parse_args()
    cfg = load_config(args.config)
    build = build_agent_base(
        cfg,
        args.out,
        base_dir=args.base,
        settings=AgentBaseSettings(
            steps=args.steps,
            learning_rate=args.learning_rate,
            recover_share=args.recover_share,
            finetune_share=args.finetune_share,
            precision=cfg.policy.bootstrap.precision,
        ),
        say=lambda m: print(m, flush=True),
    )
    print(
        f"agent base: {build.trajectories} trajectories, {build.seconds:.0f}s -> {args.out} (sha256 {build.sha256[:12]})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
