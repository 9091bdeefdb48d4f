"""Attention with head dims past the widest flash template's (256): written out as two batched
products around a row softmax (lowering's ``_wide_attention``), each a template of its own,
checked against SDPA in float64 under the interpreter (a causal one masks its scores by
position, so the first product skips the tiles above the diagonal); masked or 16-bit attention
of such widths stays with PyTorch."""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import attention_task, write_task

from kernelwright.design.capture import capture_path
from kernelwright.design.fusion import fuse
from kernelwright.design.lower import lower

# 16-row tiles: one along the 13 (9) queries, cut short; BLOCK_N 128 makes the values' 260
# columns 3 column blocks of the second product, the last partial (4 columns), and stays 16 on
# the 11 (5) keys of the first; K blocks of 64 make the 264 head dims 5 steps, the last partial
SMALL = {"BLOCK_M": 16, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 2}
WIDE = "torch.randn(2, 2, 13, 264), torch.randn(2, 2, 11, 264), torch.randn(2, 2, 11, 260)"


@pytest.mark.parametrize(
    "forward",
    [
        # causal and strided are this case with one thing more each (the default scale's
        # literal included): it runs with -m slow
        pytest.param("return F.scaled_dot_product_attention(q, k, v)", marks=pytest.mark.slow),
        "return F.scaled_dot_product_attention(q, k, v, scale=0.02) * 2.0",
        "return F.scaled_dot_product_attention(q, k, v, is_causal=True)",
        # operands whose strides allow no (B * H) view: reshaped copies
        "return F.scaled_dot_product_attention(q.transpose(1, 2).transpose(1, 2).contiguous()"
        "[:, :, :, :].transpose(0, 1).transpose(0, 1), k, v)",
    ],
    ids=["plain", "scale-then-epilogue", "causal", "strided"],
)
def test_wide_heads_are_two_products_around_a_softmax(check, forward: str) -> None:
    variants = "[[torch.randn(1, 3, 9, 264), torch.randn(1, 3, 5, 264), torch.randn(1, 3, 5, 260)]]"
    body = attention_task(forward, WIDE, variants=variants)
    sources = check(body, skills=("gemm-tiled",), params=SMALL, reference="float64", expect=2)
    for src in sources:
        assert "aten.scaled_dot_product_attention" not in src[src.index("class ModelNew") :]
        # a causal one's scores skip the key tiles above the diagonal where the tiled kernel
        # computes them (not where PyTorch's product does, our kernel applying the mask)
        vendor_scores = "torch.ops.aten.bmm.default(lhs, rhs)" in src
        assert ("k_end = tl.where(" in src) == ("is_causal" in forward and not vendor_scores)
        # the default scale, 1/sqrt(264), is a literal: another head dim is refused
        assert ("q.shape[3] != 264" in src) == ("scale=" not in forward)


def _kinds(tmp_path: Path, forward: str, inputs: str = WIDE) -> list[str]:
    path = write_task(tmp_path, attention_task(forward, inputs))
    return [g.kind for g in fuse(lower(capture_path(path, "full"))).groups]


def test_the_products_and_the_softmax_are_three_groups(tmp_path: Path) -> None:
    kinds = _kinds(tmp_path, "return F.scaled_dot_product_attention(q, k, v)")
    assert kinds == ["gemm", "reduction", "gemm"]


@pytest.mark.parametrize(
    "forward",
    [
        "return F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(13, 11).bool())",
        "return F.scaled_dot_product_attention(q.bfloat16(), k.bfloat16(), v.bfloat16()).float()",
    ],
    ids=["masked", "bf16"],
)
def test_masked_or_16_bit_wide_attention_stays_whole(tmp_path: Path, forward: str) -> None:
    assert "attention" in _kinds(tmp_path, forward)


def test_heads_a_flash_template_holds_stay_flash(tmp_path: Path) -> None:
    inputs = "torch.randn(2, 3, 21, 256), torch.randn(2, 3, 19, 256), torch.randn(2, 3, 19, 256)"
    assert _kinds(tmp_path, "return F.scaled_dot_product_attention(q, k, v)", inputs) == [
        "attention"
    ]
