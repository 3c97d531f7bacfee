"""Benchmark of ingest and validate on synthetic sessions, against the limit: pyarrow reading the same bytes.

    nice .venv/bin/python benchmarks/bench_ingest.py [--sessions 1000000] [--objects 100] [--workdir /tmp/bench-ingest]
        [--profile] [--no-validate]

1. corpus: `--sessions` valid sessions in `--objects` gzip JSON Lines objects in a folder (kept in the workdir and
   reused by a later run with the same size). Sessions come from `postgame.contract.synthetic`: a pool of 20,000
   drawn sessions, each line given a fresh session_id, so every line is distinct and goes the whole way.
2. limit: `pyarrow.json.read_json` of every object (gunzip + parse into an Arrow table, all cores), one at a time.
3. ingest: `run_ingest(folder)` into a fresh home (folder store): parse, contract check, redaction, dedupe, Parquet;
   objects parsed in parallel by the default runner (`runner: {kind: process}`, one worker per core).
4. validate: `run_validation(snapshot)`: Great Expectations suites on the snapshot, batch by batch, + Data Docs (GX
   import included).
5. with `--profile`: cProfile of `parse_object` (one worker's unit of work) on the first object, top functions.

Each step runs in its own process; its peak RSS (ru_maxrss) is its own, and for ingest also that of its largest worker
process. Printed: records/s of each step, the ratio of each to the limit, peak RSS, and the machine's cores and load
average (other work on a shared machine slows every step alike). The JSON of the results is written to
<workdir>/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

POOL = 20_000
PLACEHOLDER = "00000000-0000-4000-8000-000000000000"


def make_corpus(folder: Path, sessions: int, objects: int) -> int:
    """Write the corpus once; returns its compressed size in bytes."""
    import gzip
    import random

    from postgame.contract.synthetic import sessions as draw

    done = folder / "_COMPLETE"
    if done.exists():
        return int(done.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    templates = []
    for record in draw(POOL, seed=0):
        record["session_id"] = PLACEHOLDER
        templates.append(json.dumps(record))
    rng = random.Random(1)
    per_object = -(-sessions // objects)
    total = 0
    for part in range(objects):
        n = min(per_object, sessions - part * per_object)
        if n <= 0:
            break
        lines = [
            templates[rng.randrange(POOL)].replace(PLACEHOLDER, str(uuid.UUID(int=rng.getrandbits(128), version=4)), 1)
            for _ in range(n)
        ]
        data = gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=6, mtime=0)
        (folder / f"part-{part:05d}.jsonl.gz").write_bytes(data)
        total += len(data)
    done.write_text(str(total))
    return total


def step_limit(folder: Path) -> dict:
    import pyarrow as pa
    import pyarrow.json as pj

    started = time.perf_counter()
    rows = 0
    for path in sorted(folder.glob("*.jsonl.gz")):
        rows += pj.read_json(pa.input_stream(str(path))).num_rows  # compression detected from the extension
    return {"records": rows, "seconds": time.perf_counter() - started}


def _config(home: Path):
    from postgame.config import load_config

    home.mkdir(parents=True, exist_ok=True)
    return load_config(path=None, env={"POSTGAME_HOME": str(home)})


def step_ingest(folder: Path, home: Path) -> dict:
    from postgame.ingest import run_ingest

    cfg = _config(home)
    started = time.perf_counter()
    summary = run_ingest(str(folder), cfg=cfg)
    return {
        "records": summary.records_ingested,
        "seconds": time.perf_counter() - started,
        "snapshot_id": summary.snapshot_id,
        "quarantined": summary.quarantined,
    }


def step_validate(home: Path, snapshot_id: str) -> dict:
    cfg = _config(home)
    started = time.perf_counter()
    from postgame.validate import run_validation

    report = run_validation(snapshot_id, cfg=cfg)
    return {
        "records": report.metrics.records,
        "seconds": time.perf_counter() - started,
        "passed": report.passed,
        "expectations": len(report.results),
    }


def step_profile(folder: Path) -> dict:
    import cProfile
    import io
    import pstats

    from postgame.ingest.objects import ObjectJob, parse_object
    from postgame.settings.ingest import IngestSettings

    path = sorted(folder.glob("*.jsonl.gz"))[0]
    job = ObjectJob(key=path.name, etag="", size=path.stat().st_size, data=path.read_bytes())
    started = time.perf_counter()
    parse_object(job, IngestSettings())
    plain = time.perf_counter() - started
    profile = cProfile.Profile()
    profile.runcall(parse_object, job, IngestSettings())
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(15)
    sys.stderr.write(out.getvalue())
    return {"records": 0, "seconds": plain, "object": path.name}


def run_step(args: list[str]) -> dict:
    """One step in a fresh process: its own peak RSS, no import cache shared with the others."""
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True, cwd=ROOT)
    if "--step" in args and args[args.index("--step") + 1] == "profile":
        print(out.stderr, flush=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1_000_000)
    parser.add_argument("--objects", type=int, default=100)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench-ingest"))
    parser.add_argument("--profile", action="store_true", help="Also profile one worker's unit of work.")
    parser.add_argument("--no-validate", action="store_true", help="Measure the limit and ingest only.")
    parser.add_argument("--step", choices=["limit", "ingest", "validate", "profile"], help=argparse.SUPPRESS)
    parser.add_argument("--snapshot", help=argparse.SUPPRESS)
    args = parser.parse_args()
    corpus = args.workdir / f"corpus-{args.sessions}-{args.objects}"
    home = args.workdir / "home"

    if args.step:
        result = {
            "limit": lambda: step_limit(corpus),
            "ingest": lambda: step_ingest(corpus, home),
            "validate": lambda: step_validate(home, args.snapshot),
            "profile": lambda: step_profile(corpus),
        }[args.step]()
        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        result["peak_rss_worker_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(json.dumps(result))
        return

    load_before = os.getloadavg()
    started = time.perf_counter()
    size = make_corpus(corpus, args.sessions, args.objects)
    print(
        f"corpus: {args.sessions} sessions in {args.objects} objects, {size / 1e6:.0f} MB gzip "
        f"({time.perf_counter() - started:.0f}s)",
        flush=True,
    )
    subprocess.run(["rm", "-rf", str(home)], check=True)
    common = ["--sessions", str(args.sessions), "--objects", str(args.objects), "--workdir", str(args.workdir)]
    limit = run_step([*common, "--step", "limit"])
    print(f"limit    {limit}", flush=True)
    ingest = run_step([*common, "--step", "ingest"])
    print(f"ingest   {ingest}", flush=True)
    validate = None
    if not args.no_validate:
        validate = run_step([*common, "--step", "validate", "--snapshot", ingest["snapshot_id"]])
        print(f"validate {validate}", flush=True)
    if args.profile:
        print(f"profile  {run_step([*common, '--step', 'profile'])}", flush=True)

    steps = [("limit", limit), ("ingest", ingest)] + ([("validate", validate)] if validate else [])
    rate = {name: r["records"] / r["seconds"] for name, r in steps}
    results = {
        "sessions": args.sessions,
        "objects": args.objects,
        "gzip_bytes": size,
        "cores": os.cpu_count(),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "limit": limit,
        "ingest": ingest,
        "validate": validate,
        "records_per_s": rate,
        "ingest_vs_limit": rate["ingest"] / rate["limit"],
        "validate_vs_limit": rate["validate"] / rate["limit"] if validate else None,
    }
    (args.workdir / "results.json").write_text(json.dumps(results, indent=2))
    print("\n| step | records | seconds | records/s | vs limit | peak RSS |\n|---|---|---|---|---|---|")
    for key, r in steps:
        name = "pyarrow read_json (limit)" if key == "limit" else key
        workers = f" (+ workers {r['peak_rss_worker_mb']:,.0f} MB each)" if key == "ingest" else ""
        print(
            f"| {name} | {r['records']} | {r['seconds']:.1f} | {rate[key]:,.0f} | "
            f"{rate[key] / rate['limit']:.3f} | {r['peak_rss_mb']:,.0f} MB{workers} |"
        )
    print(f"\ncores {os.cpu_count()}, load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
