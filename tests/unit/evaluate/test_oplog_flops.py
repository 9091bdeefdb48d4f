"""The matrix FLOPs the roofline divides by: a causal attention counts the scores it keeps."""

from __future__ import annotations

import pytest
import torch

from kernelwright.evaluate.oplog import causal_fraction

FLASH = torch.ops.aten._scaled_dot_product_flash_attention.default
EFFICIENT = torch.ops.aten._scaled_dot_product_efficient_attention.default


def qkv(sq: int, sk: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.empty(1, 2, sq, 8), torch.empty(1, 2, sk, 8), torch.empty(1, 2, sk, 8)


def kept(sq: int, sk: int) -> float:
    """The fraction of ones in PyTorch's own causal mask (top-left aligned)."""
    return float(torch.ones(sq, sk).tril().mean())


@pytest.mark.parametrize(("sq", "sk"), [(64, 64), (5, 9), (9, 5), (1, 7)])
def test_a_causal_attention_counts_the_scores_its_mask_keeps(sq: int, sk: int) -> None:
    q, k, v = qkv(sq, sk)
    # is_causal positional (the flash kernel's fifth argument, the efficient one's seventh)
    assert causal_fraction(FLASH, (q, k, v, 0.0, True), {}) == pytest.approx(kept(sq, sk))
    assert causal_fraction(EFFICIENT, (q, k, v, None, False, 0.0, True), {}) == pytest.approx(
        kept(sq, sk)
    )
    assert causal_fraction(FLASH, (q, k, v), {"is_causal": True}) == pytest.approx(kept(sq, sk))


def test_everything_else_counts_in_full() -> None:
    q, k, v = qkv(16, 16)
    assert causal_fraction(FLASH, (q, k, v, 0.0, False), {}) == 1.0
    assert causal_fraction(FLASH, (q, k, v), {}) == 1.0  # the default: not causal
    assert causal_fraction(torch.ops.aten.mm.default, (q[0, 0], k[0, 0].T), {}) == 1.0
