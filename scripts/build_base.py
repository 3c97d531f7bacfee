"""Rebuild the shipped base policy (models/base/) from local code: the Python standard library and the train-split
seed projects, never eval or holdout code. See models/bootstrap.py for the recipe.

    POSTGAME_HOME=.postgame OMP_NUM_THREADS=2 nice -n 10 python scripts/build_base.py --out models/base

In fp32 (the shipped recipe, policy.bootstrap.precision): 4,158 s on 2 cores for the default world (2026-12-04;
6,264 s on a busier AVX2-only machine). bf16 autocast is ~1.4x faster with native bfloat16 and ~12x slower without
it (benchmarks/bench_precision.py); the build's first line says which this CPU is.
Deterministic for the same config, seed and thread count. `postgame bootstrap
--from-scratch` runs the same recipe into the home cache and says whether it reproduced the shipped weights.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from models.bootstrap import main

if __name__ == "__main__":
    sys.exit(main())
