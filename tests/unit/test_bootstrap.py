"""The base recipe on a tiny config: it trains (finite, falling loss), writes a checkpoint whose sha256 its manifest
records, is deterministic for the same seed, and loads as a policy. And the shipped base: its weights match its
manifest, it loads, and it answers in the format."""

from __future__ import annotations

import json
import math

import pytest

from models.base_data import SourceFile
from models.bootstrap import BaseCorrupt, BaseInputs, build_base, read_manifest, verify_base
from models.policy import SHIPPED_BASE, Policy
from tests.support import make_config

TOY = (
    "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n\n\n"
    "def mean(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total / len(xs)\n\n\n"
    "def span(xs):\n    return max(xs) - min(xs)\n"
)
TINY = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_layers": 1,
    "num_heads": 2,
    "vocab_size": 300,
    "max_prompt_tokens": 96,
    "max_new_tokens": 48,
    "bootstrap": {
        "threads": 1,
        "batch_size": 4,
        "seq_len": 32,
        "lm_steps": 4,
        "curriculum_steps": 4,
        "repair_steps": 6,
        "warmup_steps": 2,
        "learning_rate": 0.01,
    },
}


def _inputs() -> BaseInputs:
    corpus = [SourceFile("toy", "o/toy", "toy/stats.py", TOY), SourceFile("stdlib", "python/stdlib", "x.py", TOY * 2)]
    return BaseInputs(corpus=corpus, train_seeds=[], records=[])


def _cfg(tmp_path, policy: dict):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return make_config(home, policy=policy)


def test_tiny_base_trains_deterministically_and_records_its_sha256(tmp_path):
    # checked: fails when build_base seeds nothing (torch.manual_seed removed): the two sha256s differ
    cfg = _cfg(tmp_path, TINY)
    first = build_base(cfg, tmp_path / "a", inputs=_inputs())
    second = build_base(cfg, tmp_path / "b", inputs=_inputs())
    assert first.sha256 == second.sha256 and first.content_hash == second.content_hash
    manifest = verify_base(tmp_path / "a")
    assert manifest["sha256"] == first.sha256 and manifest["command"].endswith(
        "scripts/build_base.py --out models/base"
    )
    losses = [v for curve in first.losses.values() for v in curve]
    assert losses and all(math.isfinite(v) for v in losses)
    assert first.data["synthetic_repairs"] > 0
    other = _cfg(tmp_path, {**TINY, "bootstrap": {**TINY["bootstrap"], "seed": 1}})
    assert _inputs().content_hash(other.policy) != first.content_hash  # the seed is part of the content hash
    policy = Policy(tmp_path / "a", name="p", version="base", settings=cfg.policy)
    assert policy.generate(["def clamp(x, lo, hi):\n"], greedy=True)[0].completion_tokens > 0


def test_fp32_trains_its_own_base_deterministically_and_the_timing_probe_changes_nothing(tmp_path):
    # checked: fails when build_base ignores policy.bootstrap.precision (fp32 gives bf16's weights), and when the
    # probe (precision_note) draws its batch from torch's global generator (the two fp32 builds differ)
    from models.bootstrap import precision_note

    fp32 = _cfg(tmp_path, {**TINY, "bootstrap": {**TINY["bootstrap"], "precision": "fp32"}})
    first = build_base(fp32, tmp_path / "a", inputs=_inputs())
    bf16 = _cfg(tmp_path, {**TINY, "bootstrap": {**TINY["bootstrap"], "precision": "bf16"}})
    bf16 = build_base(bf16, tmp_path / "b", inputs=_inputs())
    assert first.sha256 != bf16.sha256 and first.content_hash != bf16.content_hash
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tmp_path / "a")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    state = torch.random.get_rng_state()
    note = precision_note(model, "bf16", 2, 16, 1000)
    assert note.startswith("precision bf16: a step of 2 x 16 takes") and "h for 1000 steps" in note
    assert torch.equal(state, torch.random.get_rng_state())
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())
    assert build_base(fp32, tmp_path / "c", inputs=_inputs()).sha256 == first.sha256


def test_a_tampered_base_is_refused(tmp_path):
    cfg = _cfg(tmp_path, {**TINY, "bootstrap": {**TINY["bootstrap"], "repair_steps": 1}})
    build_base(cfg, tmp_path / "a", inputs=_inputs())
    weights = tmp_path / "a" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(BaseCorrupt, match="does not match its manifest"):
        verify_base(tmp_path / "a")


def test_the_shipped_base_matches_its_manifest_loads_and_answers_in_the_format():
    # checked: fails when one byte of models/base/model.safetensors is changed
    from evals.prompts import extract_patch

    manifest = verify_base(SHIPPED_BASE)
    assert (SHIPPED_BASE / "model.safetensors").stat().st_size <= 20 * 1024 * 1024
    assert manifest == read_manifest(SHIPPED_BASE) and manifest["command"]
    config = json.loads((SHIPPED_BASE / "config.json").read_text())
    assert config["model_type"] == "qwen2"
    from postgame.config import PolicySettings

    policy = Policy(SHIPPED_BASE, name="p", version="base", settings=PolicySettings(max_new_tokens=64))
    prompt = (
        "You are fixing a bug in the repository o/toy.\n\nIssue:\n`span` returns the wrong result\n\n"
        "toy/stats.py (lines 16-17)\n```python\ndef span(xs):\n    return max(xs) + min(xs)\n```\n"
    )
    out = policy.generate([prompt], greedy=True)[0]
    assert out.completion_tokens > 0 and isinstance(extract_patch(out.text), str)
