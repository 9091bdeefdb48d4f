"""Default parameters of the scan skills (measurements in ``measurements.csv``)."""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2


@heuristic("scan_row")
def scan_row(f: GroupFacts) -> dict[str, int]:
    """Blocks of up to 2K elements, 8 per thread (two 16-byte vectors), three pipeline stages:
    two blocks of loads in flight per program while one is scanned."""
    block = max(64, min(2048, next_pow2(f.reduced_length)))
    warps = max(1, min(8, block // 256))
    rows = max(1, min(16, 2048 // block))  # short rows: several per program
    return {"BLOCK_N": block, "ROWS": rows, "WARPS": warps, "STAGES": 3}


@heuristic("scan_column")
def scan_column(f: GroupFacts) -> dict[str, int]:
    """128 positions per warp: each thread owns 4 adjacent columns of the whole block, so the
    scan is sequential adds in registers; the many time steps are pipelined (the grid holds
    only positions / 128 warps: the loads in flight must come from the pipeline)."""
    cols = max(16, min(128, next_pow2(f.inner_length)))
    return {"BLOCK_S": 16, "COLS": cols, "WARPS": max(1, cols // 128), "STAGES": 4}


@heuristic("scan_chained")
def scan_chained(f: GroupFacts) -> dict[str, int]:
    """Chunks of 32 steps x 256 positions in 2 warps (128 values a thread, held from load to
    write; warps side by side along the positions, so the scan and the total never cross warps
    through shared memory: in 4 warps Triton stages the chunk's scan through shared memory)."""
    cols = max(32, min(256, next_pow2(f.inner_length)))
    return {"BLOCK_S": 32, "COLS": cols, "WARPS": max(1, min(2, 32 * cols // 4096))}
