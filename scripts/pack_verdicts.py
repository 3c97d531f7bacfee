"""Remake evals/factory/verdicts.tar.xz: the default task world built from scratch here (every mutant's suite run in
the sandbox, no shipped verdict used), then its verdict cache packed (evals/factory/verdicts.py says why it ships).

    python scripts/pack_verdicts.py [--out evals/factory/verdicts.tar.xz] [--cache DIR]

Takes 7-13 minutes on 2 cores. `--cache DIR` packs the verdict cache (`<home>/cache/factory/validations`) of a
from-scratch build of the default world made elsewhere instead of building one (a `make demo` home on a fresh clone
is one, as long as the build did not start from shipped verdicts: `factory.shipped_verdicts: false`). Run it after a
change to the harness (evals/harness/), the seed projects, the mutation operators or the harness's default settings:
`tests/unit/test_factory_verdicts_shipped.py` fails until it has been.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    from evals.factory.build import build_id_for, build_tasks
    from evals.factory.seeds import default_seeds_dir, load_seeds
    from evals.factory.verdicts import SHIPPED, pack
    from evals.factory.verify import harness_digest
    from postgame.config import Config

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=SHIPPED)
    parser.add_argument("--cache", type=Path, default=None, help="A from-scratch build's verdict cache to pack.")
    args = parser.parse_args()

    defaults = Config()
    build_id = build_id_for(defaults.factory, load_seeds(default_seeds_dir()), defaults.eval)
    with tempfile.TemporaryDirectory(prefix="postgame-verdicts-") as tmp:
        cache = args.cache
        if cache is None:
            home = Path(tmp) / "home"
            cfg = Config(home=home, store={"uri": str(home / "store")}, factory={"shipped_verdicts": False})
            result = build_tasks(cfg, progress=lambda msg: print(f"  {msg}", file=sys.stderr))
            print(result.summary(), file=sys.stderr)
            cache = home / "cache" / "factory" / "validations"
        n = pack(cache, args.out, {"build_id": build_id, "harness_digest": harness_digest(), "seed": 0})
    print(f"{args.out}: {n} cached validations of build {build_id} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
