"""Default parameters of the attention skills, for Hopper (H100/H200).

Head dims up to 128: 128 queries a program, 64 keys a step (32 for fp32 operands past dim 64),
3 pipeline stages (the wrapper takes as many as fit in shared memory with the run's dtype),
8 warps. Head dims 129 to 256: 64 queries, 32 keys, 2 stages, 8 warps. Queries clamp to the
sequence (at least 16: one decoded query takes 16 rows).

From compile_check at sm_90 (registers and spills, not timings: no GPU measured these yet):
4 warps at dim 64 under fp32 (3xTF32) spilled 1120 bytes, 8 warps none; at dim 128 under fp32,
64-key steps spilled 244 bytes and asked 256 KB of shared memory, 32-key steps none (192 KB);
bf16 at dim 128 takes 64-key steps and 3 stages without spilling. At dim 256 under fp32 every
block tried spilled (3xTF32 holds each operand as two TF32 parts): a known gap."""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2


@heuristic("attention_flash")
def attention_flash(f: GroupFacts) -> dict[str, int]:
    """128 queries x 64 keys (32 for fp32 past dim 64), 3 stages, 8 warps; 3xTF32 for fp32.
    The key blocks no row cuts run in a loop of their own, without the position masks
    (``SPLIT_KEYS``), except for fp32 past dim 64 with 3xTF32 scores, where the second loop's
    registers spill (80 bytes at sm_90; TF32 scores, ``TF32_SCORES`` 1 where a written-out
    attention runs under tf32, leave room for it: 214 registers, no spill, at head dim 96).
    Scores keep fp32 accuracy (``TF32_SCORES`` 0) under every policy by default. Keys and
    values by pointer loads (``TMA`` 0) until descriptor loads are measured faster; a mask
    that is the whole lower triangle still loaded (``SKIP_TRIANGLE`` 0) until skipping it is
    (its runtime branch costs registers: with pointer loads MinGPT's fp32 kernel spills).
    bf16 at head dim 64 on an H100: descriptor loads ran 0.362 ms against pointer loads'
    0.337, and Triton 3.6's warp specialisation of the unmasked key loop changed nothing at 8
    warps and failed to compile at 4, so neither is a default or a parameter."""
    a = f.attention
    assert a is not None
    fp32_wide = "float32" in f.dtypes and max(a.d, a.dv) > 64
    return {
        "BLOCK_M": max(16, min(128, next_pow2(a.m))),
        "BLOCK_N": max(16, min(32 if fp32_wide else 64, next_pow2(a.n))),
        "STAGES": 3,
        "WARPS": 8,
        "FP32_MATH": 0,
        "SPLIT_KEYS": 0 if fp32_wide else 1,
        "TMA": 0,
        "SKIP_TRIANGLE": 0,
        "TF32_SCORES": 0,
    }


@heuristic("attention_flash_wide")
def attention_flash_wide(f: GroupFacts) -> dict[str, int]:
    """64 queries x 32 keys, 2 stages, 8 warps; 3xTF32 for fp32 operands, in one key loop
    (``SPLIT_KEYS`` 0: every fp32 block tried at these head dims spills already)."""
    a = f.attention
    assert a is not None
    return {
        "BLOCK_M": max(16, min(64, next_pow2(a.m))),
        "BLOCK_N": max(16, min(32, next_pow2(a.n))),
        "STAGES": 2,
        "WARPS": 8,
        "FP32_MATH": 0,
        "SPLIT_KEYS": 0 if "float32" in f.dtypes else 1,
    }


@heuristic("attention_decode")
def attention_decode(f: GroupFacts) -> dict[str, int]:
    """Both products as tl.dot over 16-row blocks of the query rows sharing a key/value head,
    key blocks of 4096 values (32 keys at head dim 128) in 4 warps; key splits up to four
    programs per SM. On an H200 (fp32, ``scripts/sweep_design.py``, SWEEPS.md) this beat the
    CUDA-core sums both with 4 rows sharing each key block (0.176 ms against 0.504 for the best
    ROWS) and with one (1.130 against 1.325 ms); ROWS is the CUDA-core variant's, for tuning."""
    a = f.attention
    assert a is not None
    block_d = max(16, next_pow2(max(a.d, a.dv)))
    return {
        "BLOCK_N": max(16, min(4096 // block_d, next_pow2(a.n))),
        "ROWS": min(8, next_pow2(a.heads // max(1, a.kv_heads) * a.m)),
        "DOT": 1,
        "WARPS": 4,
        "SPLIT_PROGRAMS": 4 * f.sm_count,
    }
