"""Look for secrets left in clear in committed snapshots (see postgame/ingest/audit.py): every stored string is put
through today's redaction again; a string it would change is reported with its object key and line.

    .venv/bin/python scripts/audit_redaction.py [--config FILE] [--snapshot ID ...] [--json]

Exit 0 when nothing is found, 1 otherwise. Read-only. Snapshots made before 5e3908b by the parallel ingest path may
hold fine-grained GitHub tokens (`github_pat_...`) in clear; `postgame redact --all` replaces them (docs/redact.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    from postgame.config import load_config
    from postgame.ingest.audit import audit_snapshot
    from postgame.ingest.catalog import list_snapshots

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, help="postgame config file (default: as `postgame` finds it)")
    parser.add_argument("--snapshot", action="append", help="a snapshot id or prefix (default: every snapshot)")
    parser.add_argument("--json", action="store_true", help="one JSON object: snapshot id -> findings")
    args = parser.parse_args()
    cfg = load_config(args.config)
    ids = args.snapshot or [m.snapshot_id for m in list_snapshots(cfg=cfg)]
    report = {sid: [asdict(f) for f in audit_snapshot(sid, cfg=cfg)] for sid in ids}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for sid, findings in report.items():
            print(f"{sid[:12]}  {len(findings)} string(s) today's redaction would change")
            for f in findings[:20]:
                print(f"    {f['object_key']}:{f['line']}  {f['field']}  {', '.join(f['kinds'])}")
    return 1 if any(report.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
