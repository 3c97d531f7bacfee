"""Benchmark of the task factory: a cold `postgame factory build` against the issue's limit (≥ 300 validated instances
in a few minutes on 2 cores), then the same build again with the verdict cache warm.

    .venv/bin/python benchmarks/bench_factory.py [--workers 2] [--limit-s 300] [--seed 0] [--projects a,b] [--home DIR]

Each build runs in a fresh temporary home (own store, own cache; `--home` to keep it), with the default `tasks:`
settings unless told otherwise. The cold build's CPU seconds are measured in a cpuacct cgroup (as root), sandboxed
test runs included. Printed: instances (per split), candidates tried and kept (drop reasons), wall seconds, instances per
minute, the ratio to the limit, and the machine's cores and load average before and after (other work on a shared
machine slows every test run alike).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.factory.build import build_tasks
from postgame.config import load_config


class CpuMeter:
    """CPU seconds of this process and everything it starts (sandboxed test runs included), via a cgroup-v1 cpuacct
    group when one can be made (root); None otherwise. On a shared machine this is the number that does not depend
    on the neighbours: an idle machine with N cores needs about cpu_s / N wall seconds."""

    ROOT = Path("/sys/fs/cgroup/cpuacct")

    def __init__(self) -> None:
        self.group = self.ROOT / f"postgame-bench-{os.getpid()}"
        try:
            self.group.mkdir()
            (self.group / "cgroup.procs").write_text(str(os.getpid()))
            self.ok = True
        except OSError:
            self.ok = False

    def seconds(self) -> float | None:
        return int((self.group / "cpuacct.usage").read_text()) / 1e9 if self.ok else None

    def close(self) -> None:
        if self.ok:
            (self.ROOT / "cgroup.procs").write_text(str(os.getpid()))
            try:
                self.group.rmdir()
            except OSError:
                pass


def run(home: Path, overrides: dict, force: bool) -> tuple[float, object]:
    home.mkdir(parents=True, exist_ok=True)
    cfg = load_config(env={"POSTGAME_HOME": str(home)})
    cfg = cfg.model_copy(update={"factory": cfg.factory.model_copy(update=overrides)})
    start = time.monotonic()
    result = build_tasks(
        cfg, force=force, progress=lambda m: print(f"  [{time.monotonic() - start:6.1f}s] {m}", flush=True)
    )
    return time.monotonic() - start, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit-s", type=float, default=300.0, help="the limit a cold build is measured against")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--projects", default="", help="comma-separated seed projects (default: all)")
    parser.add_argument(
        "--home",
        default="",
        help="build in this (empty) home and keep it, e.g. to run "
        "scripts/verify_all_tasks.py on the result; default: a temp folder",
    )
    args = parser.parse_args()
    overrides = {"workers": args.workers, "seed": args.seed}
    if args.projects:
        overrides["projects"] = args.projects.split(",")
    print(f"cores {os.cpu_count()}, load average before {os.getloadavg()}")
    meter = CpuMeter()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-factory-") as tmp:
            home = Path(args.home) if args.home else Path(tmp) / "home"
            cold_s, cold = run(home, overrides, force=True)
            cold_cpu = meter.seconds()
            warm_s, warm = run(home, overrides, force=True)
    finally:
        meter.close()
    load_after = os.getloadavg()
    tried = sum(p.tried for p in cold.projects.values())
    dropped = Counter()
    for p in cold.projects.values():
        dropped.update(p.dropped)
    report = {
        "instances": cold.instances,
        "per_split": cold.per_split,
        "projects": len(cold.projects),
        "candidates_tried": tried,
        "dropped": dict(dropped),
        "workers": args.workers,
        "cold_s": round(cold_s, 1),
        "warm_s": round(warm_s, 1),
        "instances_per_min": round(cold.instances / cold_s * 60, 1),
        "limit_s": args.limit_s,
        "cold_over_limit": round(cold_s / args.limit_s, 2),
        "cold_cpu_s": None if cold_cpu is None else round(cold_cpu, 1),
        "cold_cpu_s_per_core_over_limit": None
        if cold_cpu is None
        else round(cold_cpu / args.workers / args.limit_s, 2),
        "cores": os.cpu_count(),
        "load_after": [round(x, 2) for x in load_after],
        "build_id": cold.build_id,
        "same_build_id_warm": warm.build_id == cold.build_id,
        "same_instances_warm": warm.instances_sha256 == cold.instances_sha256,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
