"""Default parameters of the GEMM skills, for Hopper (H100/H200): 128 x 128 output tiles in 8
warps, K blocks of 32 values (64 for 2-byte operands loaded by TMA: the same 16 KB a stage and
operand), four pipeline stages, grouped order over 8 row blocks, one persistent program per SM.
Tiles shrink to the product's size; the wrapper takes as many of the stages as fit in shared
memory with the run's dtypes and layouts (``_stages``), and every default tile leaves room for
two (the skills' constraint). Measurements behind the rules are in ``measurements.csv``.

128 x 256 tiles ran faster under bf16 with TMA loads (4096^3: 0.188 ms against 0.224 for
128 x 128 in 4 stages), but the file's pointer-load kernel, which serves the same parameters for
operands TMA cannot describe, spills at that tile (1676 bytes, sm_90). So BLOCK_N stays 128 and
the wrapper widens the TMA kernel's tile alone: 2-byte operands take twice the columns (up to 256)
where the fp32 accumulator keeps within 128 values a thread (``launch.ACC_PER_THREAD``)."""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2

# H200, 4096^3-class products: 4 stages against 3 ran 0.224 ms against 0.272 (square, bf16),
# 0.155 against 0.177 (tall-skinny, bf16), 0.144 against 0.222 (split-K, bf16); under fp32 and
# tf32 no product measured ran more than 0.2% slower (measurements.csv)
STAGES = 4


def _tile(f: GroupFacts) -> dict[str, int]:
    g = f.gemm
    assert g is not None
    return {
        "BLOCK_M": max(16, min(128, next_pow2(g.m))),
        "BLOCK_N": max(16, min(128, next_pow2(g.n))),
        "BLOCK_K": max(16, min(32, next_pow2(g.k))),
        "GROUP_M": 8,
        "STAGES": STAGES,
        "WARPS": 8,
        "FP32_MATH": 0,
    }


@heuristic("gemm_tiled")
def gemm_tiled(f: GroupFacts) -> dict[str, int]:
    """128 x 128 x 32 tiles, 4 stages, 8 warps, one persistent program per SM, 3xTF32 for fp32
    operands."""
    return {**_tile(f), "PROGRAMS_PER_SM": 1}


@heuristic("gemm_tall_skinny")
def gemm_tall_skinny(f: GroupFacts) -> dict[str, int]:
    """The whole narrow N in one column block (up to 256), so each row block of the left
    operand is read once; no grouping needed (one column block); one persistent program per
    SM walks the row blocks."""
    g = f.gemm
    assert g is not None
    tile = _tile(f)
    block_n = max(16, min(256, next_pow2(g.n)))
    warps = 8 if block_n * tile["BLOCK_M"] >= 128 * 128 else 4
    return {**tile, "BLOCK_N": block_n, "GROUP_M": 1, "WARPS": warps, "PROGRAMS_PER_SM": 1}


@heuristic("gemm_split_k")
def gemm_split_k(f: GroupFacts) -> dict[str, int]:
    """Few output tiles: slices of K so that about two programs per SM share the product."""
    return {**_tile(f), "SPLIT_PROGRAMS": 2 * f.sm_count}


@heuristic("gemm_vendor")
def gemm_vendor(f: GroupFacts) -> dict[str, int]:
    """The epilogue kernel's tile: 32 rows x 128 columns in 4 warps, 32 values a thread, each
    row of the tile 128 contiguous values (16-byte vectors along N); the per-column operands
    (a bias) load once a program. The split-K combine kernel's tile, which does the same pass
    over an fp32 product."""
    g = f.gemm
    assert g is not None
    return {
        "BLOCK_M": max(16, min(32, next_pow2(g.m))),
        "BLOCK_N": max(32, min(128, next_pow2(g.n))),
        "WARPS": 4,
    }
