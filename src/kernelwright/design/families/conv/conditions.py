"""Conditions of the convolution skills: the implicit GEMM's size and the epilogue."""

from __future__ import annotations

from kernelwright.skills.base import Fail, Ok, Outcome
from kernelwright.skills.conditions import GroupFacts, condition


@condition("conv_gemm_at_least")
def conv_gemm_at_least(f: GroupFacts, min_k: int, min_n: int) -> Outcome:
    """An implicit GEMM wide enough for tensor-core tiles: K = C_in x KH x KW taps and N = C_out
    channels (below, most of each tile's products are padding and the vendor's direct
    kernels win)."""
    g = f.gemm
    assert g is not None
    if g.k >= min_k and g.n >= min_n:
        return Ok(
            f"K = C_in*KH*KW = {g.k} >= {min_k} and C_out = {g.n} >= {min_n}: "
            "tensor-core tiles of an implicit GEMM"
        )
    return Fail(
        f"K = C_in*KH*KW = {g.k}, C_out = {g.n}: an implicit GEMM needs K >= {min_k} and "
        f"C_out >= {min_n} to fill tensor-core tiles (the vendor's convolution serves it)"
    )


@condition("conv_has_epilogue")
def conv_has_epilogue(f: GroupFacts) -> Outcome:
    """Element-wise work after the convolution for a kernel of our own to do."""
    g = f.gemm
    assert g is not None
    if g.epilogue:
        return Ok(f"an epilogue ({', '.join(dict.fromkeys(g.epilogue))}) for one fused kernel")
    return Fail("no epilogue: PyTorch's convolution alone is the whole group")
