"""Conditions of the GEMM skills: the product's shape and its operands' layout."""

from __future__ import annotations

from kernelwright.skills.base import Fail, Ok, Outcome
from kernelwright.skills.conditions import GroupFacts, condition


@condition("gemm_float_operands")
def gemm_float_operands(f: GroupFacts) -> Outcome:
    """tl.dot multiplies fp32, tf32, bf16 and fp16 operands with fp32 accumulation."""
    bad = [d for d in f.dtypes if d not in ("float32", "float16", "bfloat16")]
    if not bad:
        return Ok(f"{', '.join(f.dtypes)} operands: tensor cores, fp32 accumulation")
    return Fail(f"{', '.join(bad)} operands: tl.dot takes fp32, bf16 and fp16 only")


@condition("output_tiles_at_least")
def output_tiles_at_least(f: GroupFacts, per_sm: float, tile: int = 128) -> Outcome:
    """Enough output tiles to fill the GPU without splitting K."""
    g = f.gemm
    assert g is not None
    tiles = g.batch * -(-g.m // tile) * -(-g.n // tile)
    limit = per_sm * f.sm_count
    if tiles >= limit:
        return Ok(f"{tiles} output tiles of {tile} x {tile} >= {limit:g}: the tiles fill the GPU")
    return Fail(f"{tiles} output tiles of {tile} x {tile} < {limit:g}: most SMs would idle")


@condition("output_tiles_below")
def output_tiles_below(f: GroupFacts, per_sm: float, tile: int = 128) -> Outcome:
    """Too few output tiles for the SMs: split-K adds programs along K."""
    g = f.gemm
    assert g is not None
    tiles = g.batch * -(-g.m // tile) * -(-g.n // tile)
    limit = per_sm * f.sm_count
    if tiles < limit:
        return Ok(f"{tiles} output tiles of {tile} x {tile} < {limit:g}: SMs idle without a split")
    return Fail(f"{tiles} output tiles of {tile} x {tile} >= {limit:g}: no need to split K")


@condition("tall_skinny")
def tall_skinny(f: GroupFacts, max_n: int, ratio: int) -> Outcome:
    """A narrow output (N fits one column block) of many rows."""
    g = f.gemm
    assert g is not None
    if g.n <= max_n and g.m >= ratio * g.n:
        return Ok(
            f"N = {g.n} <= {max_n} and M = {g.m} >= {ratio} x N: one column block per row "
            "block, the right operand read from L2 by every row block"
        )
    return Fail(f"M = {g.m}, N = {g.n}: not a tall-skinny product (N <= {max_n}, M >= {ratio}N)")


@condition("tma_aligned")
def tma_aligned(f: GroupFacts) -> Outcome:
    """Both operands can be described to the tensor memory accelerator."""
    g = f.gemm
    assert g is not None
    if g.tma_aligned:
        return Ok("unit and 16-byte aligned strides: TMA descriptors load whole tiles")
    return Fail(
        "an operand's strides are not 16-byte multiples (or broadcast): pointer loads serve it"
    )


@condition("gemm_epilogue_beyond_addmm")
def gemm_epilogue_beyond_addmm(f: GroupFacts) -> Outcome:
    """Element-wise work after the product beyond one added bias or matrix (which PyTorch's
    addmm adds inside cuBLAS's call) for a kernel of our own to do."""
    g = f.gemm
    assert g is not None
    if g.epilogue in ((), ("add",)):
        return Fail("no epilogue beyond an added bias or matrix: PyTorch's addmm is the whole "
                    "group in one vendor call")
    return Ok(f"an epilogue ({', '.join(dict.fromkeys(g.epilogue))}) for one kernel after "
              "the vendor's product")
