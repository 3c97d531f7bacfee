"""Rebuild the shipped base policy (models/base/) from local code: the Python standard library and the train-split
seed projects, never eval or holdout code. See models/bootstrap.py for the recipe.

    POSTGAME_HOME=.postgame OMP_NUM_THREADS=2 nice -n 10 python scripts/build_base.py --out models/base

About an hour on 2 shared cores with native bfloat16 (the shipped recipe, policy.bootstrap.precision: bf16); on an
AVX2-only CPU bf16 runs ~12x slower (~12 h: the build says so at its start), and POSTGAME_POLICY__BOOTSTRAP__PRECISION=fp32
takes ~1 h (benchmarks/bench_precision.py). Deterministic for the same config, seed and thread count. `postgame bootstrap
--from-scratch` runs the same recipe into the home cache and says whether it reproduced the shipped weights.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from models.bootstrap import main

if __name__ == "__main__":
    sys.exit(main())
