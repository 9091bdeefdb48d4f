"""Conditions of the convolution skills: the implicit GEMM's size and the epilogue."""

from __future__ import annotations

from kernelwright.design.families.conv.spec import DENSE_GROUPS, TILE_N, block_diagonal
from kernelwright.skills.base import Fail, Ok, Outcome
from kernelwright.skills.conditions import GroupFacts, condition


@condition("conv_gemm_at_least")
def conv_gemm_at_least(f: GroupFacts, min_k: int, min_n: int) -> Outcome:
    """An implicit GEMM wide enough for tensor-core tiles: K = C_in x KH x KW taps and N = C_out
    channels (below, most of each tile's products are padding and the vendor's direct
    kernels win)."""
    g = f.gemm
    assert g is not None
    n = g.n // g.groups  # a group's output channels: a tile's columns lie in one group
    what = "C_out" if g.groups == 1 else "C_out/G"
    k = g.k
    if g.transposed and block_diagonal(g.groups, n):
        n, k, what = g.n, g.k * g.groups, "C_out (one block-diagonal product)"
    if k >= min_k and n >= min_n:
        return Ok(
            f"K = C_in*KH*KW = {k} >= {min_k} and {what} = {n} >= {min_n}: "
            "tensor-core tiles of an implicit GEMM"
        )
    return Fail(
        f"K = C_in*KH*KW = {k}, {what} = {n}: an implicit GEMM needs K >= {min_k} and "
        f"{what} >= {min_n} to fill tensor-core tiles (the vendor's convolution serves it)"
    )


@condition("conv_one_group")
def conv_one_group(f: GroupFacts) -> Outcome:
    """Every output channel reads every input channel: one implicit GEMM (a grouped
    convolution is G narrow products, a depthwise one no product at all)."""
    g = f.gemm
    assert g is not None
    if g.groups == 1:
        return Ok("one group: one implicit GEMM")
    return Fail(f"{g.groups} groups of {g.n // g.groups} output channel(s): a product a group, "
                "not one GEMM")


@condition("conv_direct_sums")
def conv_direct_sums(f: GroupFacts, max_taps: int, max_one_group_taps: int) -> Outcome:
    """Output values that each sum few taps, computed directly on CUDA cores: a grouped
    convolution's C_in / G x taps (a depthwise one's KH x KW), too few for tensor-core tiles; or
    one group's C_in x taps where the input is shallow (an image's 3 channels, say), whose
    channels-last implicit GEMM would pad each tap's few channels to a block of K."""
    g = f.gemm
    assert g is not None
    if g.groups > 1:
        if g.k <= max_taps:
            return Ok(f"{g.groups} groups, {g.k} taps an output value (<= {max_taps}): direct sums")
        return Fail(f"{g.k} taps an output value: more than the direct kernel's {max_taps}")
    if g.k <= max_one_group_taps:
        return Ok(f"one group of {g.k} taps an output value (<= {max_one_group_taps}): direct "
                  "sums")
    return Fail(f"one group of {g.k} taps an output value: more than the direct kernel's "
                f"{max_one_group_taps} (the implicit GEMM's or the vendor's convolution)")


@condition("conv_has_epilogue")
def conv_has_epilogue(f: GroupFacts) -> Outcome:
    """Element-wise work after the convolution for a kernel of our own to do."""
    g = f.gemm
    assert g is not None
    if g.epilogue:
        return Ok(f"an epilogue ({', '.join(dict.fromkeys(g.epilogue))}) for one fused kernel")
    return Fail("no epilogue: PyTorch's convolution alone is the whole group")


@condition("conv_not_transposed")
def conv_not_transposed(f: GroupFacts) -> Outcome:
    """A forward convolution: each output position reads the same taps of a patch."""
    g = f.gemm
    assert g is not None
    if not g.transposed:
        return Ok("a forward convolution: the same taps for every output position")
    return Fail("a transposed convolution: its output positions read different taps by phase")


@condition("conv_transposed_phases")
def conv_transposed_phases(f: GroupFacts) -> Outcome:
    """A transposed convolution: the output positions of one phase (oh % stride_h, ow %
    stride_w) read the same taps (every stride-th one, or every stride / gcd(stride,
    dilation)-th where dilated), so each phase is an implicit GEMM of its own; grouped, one
    a group, each tile's columns in one group (a multiple of 16 output channels a group)."""
    g = f.gemm
    assert g is not None
    if not g.transposed:
        return Fail("not a transposed convolution")
    if g.groups == 1:
        return Ok("a transposed convolution of one group: one implicit GEMM per output phase")
    opg = g.n // g.groups
    if block_diagonal(g.groups, opg):
        return Ok(f"a transposed convolution of {g.groups} groups of {opg} output channels "
                  f"(no multiple of {TILE_N}): one implicit GEMM per output phase over a "
                  f"block-diagonal weight, {g.groups}x the products in tiles that fill")
    if opg % TILE_N:
        return Fail(f"a transposed convolution of {g.groups} groups of {opg} output channels: "
                    f"the phase kernel's tiles need a multiple of {TILE_N} a group, or at most "
                    f"{DENSE_GROUPS} groups to run as one block-diagonal product")
    return Ok(f"a transposed convolution of {g.groups} groups of {opg} output channels: one "
              "implicit GEMM per output phase and group")
