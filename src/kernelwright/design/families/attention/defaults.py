"""Default parameters of the attention skills, for Hopper (H100/H200).

Head dims up to 128: 128 queries a program, 64 keys a step, 3 pipeline stages (the wrapper takes
as many as fit in shared memory with the run's dtype: 2 under fp32 at dim 128), 8 warps (4 up
to dim 64: a quarter of the accumulator). Head dims 129 to 256: 64 queries, 32 keys, 2 stages,
8 warps, so the fp32 output block stays at 64 values a thread. Queries clamp to the sequence
(at least 16: one decoded query takes 16 rows). These follow the Triton fused-attention
tutorial's Hopper configurations; they were not measured here (no ``measurements.csv`` yet)."""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2


@heuristic("attention_flash")
def attention_flash(f: GroupFacts) -> dict[str, int]:
    """128 queries x 64 keys, 3 stages, 8 warps (4 up to dim 64); 3xTF32 for fp32 operands."""
    a = f.attention
    assert a is not None
    return {
        "BLOCK_M": max(16, min(128, next_pow2(a.m))),
        "BLOCK_N": max(16, min(64, next_pow2(a.n))),
        "STAGES": 3,
        "WARPS": 4 if max(a.d, a.dv) <= 64 else 8,
        "FP32_MATH": 0,
    }


@heuristic("attention_flash_wide")
def attention_flash_wide(f: GroupFacts) -> dict[str, int]:
    """64 queries x 32 keys, 2 stages, 8 warps; 3xTF32 for fp32 operands."""
    a = f.attention
    assert a is not None
    return {
        "BLOCK_M": max(16, min(64, next_pow2(a.m))),
        "BLOCK_N": max(16, min(32, next_pow2(a.n))),
        "STAGES": 2,
        "WARPS": 8,
        "FP32_MATH": 0,
    }
