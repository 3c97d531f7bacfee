"""Check every instance of the task catalog (the "all of them" check; CI runs a sample: tests/data/test_tasks_sample.py).

    .venv/bin/python scripts/verify_all_tasks.py [--split NAME] [--workers N] [--json OUT.json]

For each instance, through the evaluation harness and the instance's own environment snapshot (hash-verified):
- the gold patch resolves it (`evaluate` → resolved);
- the empty patch does not (`evaluate` → unresolved);
- the base, run with the empty patch, fails every FAIL_TO_PASS test and passes every PASS_TO_PASS test.
Exits 1 naming each instance that fails a check (with the reason), 0 when all pass. Config as for `postgame`
(`$POSTGAME_CONFIG`, `./postgame.yaml`, `$POSTGAME_HOME`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.factory.instances import load_split
from evals.harness import evaluate, run_tests
from evals.harness.constants import PASSING
from postgame.runtime import current_config


def check(instance, settings) -> list[str]:
    problems = []
    gold = evaluate(instance, instance.patch, repos_dir=None, settings=settings)
    if gold.status != "resolved":
        failing = gold.tests_status.get("FAIL_TO_PASS", {}).get("failure", []) + gold.tests_status.get(
            "PASS_TO_PASS", {}
        ).get("failure", [])
        problems.append(f"gold patch is {gold.status} ({gold.error or gold.apply_error or failing[:3]})")
    if evaluate(instance, "", repos_dir=None, settings=settings).status != "unresolved":
        problems.append("the empty patch is not unresolved")
    base = run_tests(instance, "", repos_dir=None, settings=settings)
    if base.infra_error or base.timed_out:
        problems.append(f"base run: {base.infra_error or 'timed out'}")
    else:
        passing_f2p = [t for t in instance.FAIL_TO_PASS if base.statuses.get(t) in PASSING]
        failing_p2p = [t for t in instance.PASS_TO_PASS if base.statuses.get(t) not in PASSING]
        if passing_f2p:
            problems.append(f"base passes FAIL_TO_PASS {passing_f2p[:3]}")
        if failing_p2p:
            problems.append(f"base fails PASS_TO_PASS {failing_p2p[:3]}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default=None, help="train, eval or holdout (default: all)")
    parser.add_argument("--workers", type=int, default=0, help="parallel instances (default: cores)")
    parser.add_argument("--json", dest="json_out", default=None, help="write the per-instance results here")
    args = parser.parse_args()
    cfg = current_config()
    settings = cfg.eval
    instances = load_split(cfg, args.split)
    workers = args.workers or os.cpu_count() or 1
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = dict(zip((i.instance_id for i in instances), pool.map(lambda i: check(i, settings), instances)))
    bad = {k: v for k, v in results.items() if v}
    seconds = time.monotonic() - start
    for inst_id, problems in sorted(bad.items()):
        print(f"FAIL {inst_id}: {'; '.join(problems)}")
    print(
        f"{len(instances) - len(bad)}/{len(instances)} instances pass every check ({seconds:.0f}s, {workers} workers)"
    )
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps({"instances": len(instances), "failed": bad, "seconds": round(seconds, 1)}, indent=2)
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
