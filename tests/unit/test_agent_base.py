"""The agent base's last build step: the fine-tuned weights moved back toward the base's (WiSE-FT), and the shipped
checkpoint's manifest records the settings this code builds with."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest
import torch

from models.agent_base import AgentBaseSettings, toward_base
from tests.support import tiny_qwen2

SHIPPED = Path(__file__).resolve().parents[2] / "models" / "base_agent"


@pytest.mark.parametrize("share", [0.0, 0.8, 1.0])
def test_the_weights_move_toward_the_base_by_the_share_not_kept(share):
    base, trained = tiny_qwen2(0), tiny_qwen2(1)
    before = {n: p.detach().clone() for n, p in trained.named_parameters()}
    reference = {n: p.detach().clone() for n, p in base.named_parameters()}
    toward_base(trained, base, share)
    for name, p in trained.named_parameters():
        assert torch.allclose(p, reference[name] + share * (before[name] - reference[name]), atol=1e-6), name
    assert trained.lm_head.weight.data_ptr() == trained.model.embed_tokens.weight.data_ptr()  # still tied
    assert all(torch.equal(p, reference[n]) for n, p in base.named_parameters())  # the base is left alone


def test_the_shipped_agent_base_was_built_with_these_settings():
    manifest = json.loads((SHIPPED / "manifest.json").read_text())
    assert manifest["settings"] == asdict(AgentBaseSettings(precision=manifest["settings"]["precision"]))
