"""The agent base's last build step: the fine-tuned weights moved back toward the base's (WiSE-FT). The shipped
checkpoint's manifest is checked in tests/unit/test_agent_transfer.py (stage 1's settings and stage 2's)."""

from __future__ import annotations

import pytest
import torch

from models.agent_base import toward_base
from tests.support import tiny_qwen2


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
