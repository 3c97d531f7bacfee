"""Check every instance of an added project through the whole harness, as a user grades an export: the gold patch
must resolve each one, and a no-op patch (one new text file, no code change: the base really runs) none.

    .venv/bin/python scripts/byor_check.py --project glom --out /tmp/byor-glom [--splits train,indomain] [--workers 2]

For each split: `postgame factory export --split S --project P --out OUT/S`, gold and no-op predictions, then
`postgame eval run` on each (the instances' env_spec builds or finds the project's environment). Prints one line per
split ("train: gold 28/28, no-op 0/28 (mined 0), 312 s") and writes OUT/check.json; exits 0 only when gold resolves
all and no-op none. Config as for `postgame` ($POSTGAME_CONFIG, ./postgame.yaml).
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
sys.path.insert(0, str(ROOT))

from scripts.realworld import NOOP_PATCH  # noqa: E402 - the same no-op patch the real-world set is checked with


def _postgame(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.run([sys.executable, "-m", "postgame", *args], env=env, text=True, capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"postgame {' '.join(args[:3])} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return proc


def check_split(project: str, split: str, out: Path, workers: int, timeout: float) -> dict:
    folder = out / split
    _postgame("factory", "export", "--split", split, "--project", project, "--out", str(folder))
    instances = [json.loads(line) for line in (folder / "instances.jsonl").read_text().splitlines() if line.strip()]
    result: dict = {
        "split": split,
        "instances": len(instances),
        "mined": sum(bool(i.get("mined_from")) for i in instances),
    }
    start = time.monotonic()
    for name, patch_of in (("gold", lambda i: i["patch"]), ("noop", lambda i: NOOP_PATCH)):
        preds = folder / f"{name}.jsonl"
        preds.write_text(
            "".join(
                json.dumps({"instance_id": i["instance_id"], "model_name_or_path": name, "model_patch": patch_of(i)})
                + "\n"
                for i in instances
            )
        )
        _postgame(
            "eval", "run", "--instances", str(folder / "instances.jsonl"), "--predictions", str(preds),
            "--repos", str(folder / "repos"), "--out", str(folder / f"run-{name}"), "--workers", str(workers),
            "--timeout", str(timeout), "--no-progress",
        )  # fmt: skip
        report = json.loads((folder / f"run-{name}" / "report.json").read_text())
        resolved = [k for k, v in report["instances"].items() if v.get("resolved")]
        result[name] = len(resolved)
        result[f"{name}_errors"] = sorted(k for k, v in report["instances"].items() if v.get("error"))
        result[f"{name}_unresolved" if name == "gold" else f"{name}_resolved"] = sorted(
            set(report["instances"]) - set(resolved) if name == "gold" else resolved
        )
    result["seconds"] = round(time.monotonic() - start, 1)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--splits", default="train,indomain")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = [check_split(args.project, s, args.out, args.workers, args.timeout) for s in args.splits.split(",")]
    (args.out / "check.json").write_text(json.dumps(results, indent=2))
    ok = True
    for r in results:
        n = r["instances"]
        print(
            f"{args.project} {r['split']}: gold {r['gold']}/{n}, no-op {r['noop']}/{n} (mined {r['mined']}), {r['seconds']} s"
        )
        ok = ok and r["gold"] == n and r["noop"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
