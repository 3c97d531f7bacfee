"""scripts/gpu_check.py on a machine without a CUDA GPU: it says why it skips and exits 0 (the lead runs it on GPUs)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_check.py"


def load():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gpu_check_skips_on_cpu_with_the_reason(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present: this test covers the CPU path only")
    gpu_check = load()
    assert gpu_check.main(["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "no CUDA GPU" in out["skipped"] and "torch.cuda.is_available() is False" in out["skipped"]
    assert gpu_check.main([]) == 0
    assert capsys.readouterr().out.startswith("SKIP: no CUDA GPU")
