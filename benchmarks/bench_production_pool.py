"""A base that has never seen the traffic's bugs: does the default demo's champion climb from it?

    OMP_NUM_THREADS=2 POSTGAME_POLICY__BOOTSTRAP__PRECISION=bf16 .venv/bin/python \
        benchmarks/bench_production_pool.py --out DIR [--project-share 0.25] [--demo]

The shipped base learned, among its ~3,900 synthetic repairs, every mutant of the seed projects' modules but the
held-out ones, and the train split's gold answers (`policy.bootstrap.train_split: shown`, `project_repair_share:
1.0`); the demo's traffic is that train split. Its verified episodes then hold nothing the base lacks (BENCHMARKS.md,
sessions 19-28), and no candidate beats it. A deployed model meets new work instead. This builds, with the shipped
recipe (`scripts/build_base.py`, then stage 1 of `scripts/build_agent_base.py`; stage 2 is skipped), a base with
`train_split: withheld` (neither the train split's mutants nor its gold answers are repaired) and
`project_repair_share: --project-share` (of the seed projects' other mutants only that share, a fixed draw), while it
still reads all the projects' code in pre-training and repairs the standard library as before. The held-out bugs
(dev, in-domain, eval, holdout) stay out as always. With `--demo` it then runs `postgame demo` in a fresh home under
DIR with that agent base as the first champion (`policy.base_model`) and writes its console to DIR/demo.log.
Everything runs in child processes with these settings in their environment, so each stage is the command a user
would run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--project-share", type=float, default=0.25)
    parser.add_argument("--demo", action="store_true", help="Then run `postgame demo` from the new agent base.")
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = os.environ | {
        "POSTGAME_HOME": os.environ.get("POSTGAME_HOME", str(out / "home")),
        "POSTGAME_POLICY__BOOTSTRAP__TRAIN_SPLIT": "withheld",
        "POSTGAME_POLICY__BOOTSTRAP__PROJECT_REPAIR_SHARE": str(args.project_share),
    }
    base, agent, started, result = out / "base", out / "agent", time.monotonic(), {}

    def run(name: str, command: list[str], extra: dict | None = None) -> None:
        began = time.monotonic()
        with open(out / f"{name}.log", "w") as log:
            rc = subprocess.call(command, env=env | (extra or {}), stdout=log, stderr=log, cwd=ROOT)
        result[name] = {"rc": rc, "seconds": round(time.monotonic() - began), "log": str(out / f"{name}.log")}
        print(json.dumps({name: result[name]}), flush=True)
        if rc:
            raise SystemExit(f"{name} failed (rc {rc}): see {out / f'{name}.log'}")

    if not (base / "manifest.json").exists():
        run("base", [sys.executable, "scripts/build_base.py", "--out", str(base)])
    if not (agent / "manifest.json").exists():
        stage1 = ["--out", str(agent), "--base", str(base), "--transfer-steps", "0"]
        run("agent", [sys.executable, "scripts/build_agent_base.py", *stage1])
    if args.demo:
        demo = {"POSTGAME_HOME": str(out / "demo-home"), "POSTGAME_POLICY__BASE_MODEL": str(agent)}
        run("demo", [sys.executable, "-m", "postgame", "demo"], demo)
    result["seconds"] = round(time.monotonic() - started)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
