"""Default parameters of the attention skills, for Hopper (H100/H200).

Head dims up to 128: 16-bit operands take 128 queries a program and 64 keys a step; fp32
operands 64 queries and 32 keys, because their scores are an IEEE fp32 product (``FP32_MATH``
2, see launch.py) on CUDA cores, whose operand tiles live in registers. 3 pipeline stages (the
wrapper takes as many as fit in shared memory with the run's dtype), 8 warps. Head dims 129 to
256: 64 queries, 32 keys, 2 stages, 8 warps. Queries clamp to the sequence (at least 16: one
decoded query takes 16 rows).

From compile_check at sm_90 (registers and spills, not timings): IEEE scores with 128 x 64
blocks spilled 1216 bytes at dim 64 (64 x 64: 624; 128 x 32: 240); 64 x 32 took 128 registers
at dim 64 and 187 at dim 128 without spilling. 3xTF32 for both products (FP32_MATH 0) at
128 x 64 and dim 64 did not spill with 8 warps (4 warps: 1120 bytes). bf16 at dim 128 takes
64-key steps and 3 stages without spilling. At dim 256 under fp32 every block tried spilled: a
known gap."""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2


@heuristic("attention_flash")
def attention_flash(f: GroupFacts) -> dict[str, int]:
    """128 queries x 64 keys (fp32: 64 x 32), 3 stages, 8 warps; FP32_MATH 2."""
    a = f.attention
    assert a is not None
    fp32 = "float32" in f.dtypes
    return {
        "BLOCK_M": max(16, min(64 if fp32 else 128, next_pow2(a.m))),
        "BLOCK_N": max(16, min(32 if fp32 else 64, next_pow2(a.n))),
        "STAGES": 3,
        "WARPS": 8,
        "FP32_MATH": 2,
    }


@heuristic("attention_flash_wide")
def attention_flash_wide(f: GroupFacts) -> dict[str, int]:
    """64 queries x 32 keys, 2 stages, 8 warps; FP32_MATH 2 (IEEE scores, 3xTF32 values)."""
    a = f.attention
    assert a is not None
    return {
        "BLOCK_M": max(16, min(64, next_pow2(a.m))),
        "BLOCK_N": max(16, min(32, next_pow2(a.n))),
        "STAGES": 2,
        "WARPS": 8,
        "FP32_MATH": 2,
    }
