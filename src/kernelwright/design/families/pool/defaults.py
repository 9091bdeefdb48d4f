"""Default parameters of the pooling skills (measurements in ``measurements.csv``)."""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2


@heuristic("pool")
def pool(f: GroupFacts) -> dict[str, int]:
    """A program owns ROWS x BLOCK_W outputs per step and STEPS unrolled steps along the outer
    pooled axis: 1-D pooling (rows are planes, nothing rolls) one plane row of up to 512
    outputs in one warp; 2-D and 3-D pooling rows of up to 128 outputs, 4 rows a step, 8
    steps in 8 warps."""
    width = f.domain[-1] if f.domain else 64
    if len(f.domain) < 4 or f.domain[-2] == 1:
        return {"BLOCK_W": max(16, min(512, next_pow2(width))), "ROWS": 1, "STEPS": 1, "WARPS": 1}
    return {"BLOCK_W": max(16, min(128, next_pow2(width))), "ROWS": 4, "STEPS": 8, "WARPS": 8}


@heuristic("pool-tap-tile")
def pool_tap_tile(f: GroupFacts) -> dict[str, int]:
    """Up to 64 outputs along W and as many output rows as make a tile of about 2048 values (the
    W window's taps rounded up to a power of two), in 4 warps."""
    taps = next_pow2(f.pool.kernel[-1]) if f.pool is not None else 1
    width = f.domain[-1] if f.domain else 64
    block = max(16, min(64, next_pow2(width)))
    return {"BLOCK_W": block, "ROWS": max(1, min(8, 2048 // (block * taps))), "WARPS": 4}
