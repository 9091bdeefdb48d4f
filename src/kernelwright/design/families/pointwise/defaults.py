"""Default parameters of the element-wise skills: 16-byte loads, 4-8 warps, blocks of 1K-4K."""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2


@heuristic("elementwise_flat")
def elementwise_flat(f: GroupFacts) -> dict[str, int]:
    """Blocks of 1024 elements in 4 warps (smaller for small tensors)."""
    block = 1024 if f.numel >= 1 << 20 else max(128, min(1024, next_pow2(f.numel)))
    return {"BLOCK": block, "WARPS": 4}


@heuristic("elementwise_tiled")
def elementwise_tiled(f: GroupFacts) -> dict[str, int]:
    """The contiguous run as the columns (32-1024), 4096-element tiles in 8 warps."""
    block_n = max(32, min(1024, next_pow2(f.inner_length)))  # the contiguous run of columns
    return {"BLOCK_N": block_n, "TILE": 4096, "WARPS": 8}  # 16 elements per thread
