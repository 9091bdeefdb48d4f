"""Default parameters of the pooling skill (measurements in ``measurements.csv``)."""

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
