"""Default parameters of the top-k skill."""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2


@heuristic("select_rows")
def select_rows(f: GroupFacts) -> dict[str, int]:
    """Whole rows in registers, several short ones per program: about 2K elements, 16 per
    thread of 4 warps. A row of up to 128 elements then sits in one warp (32 lanes x 4), so a
    round's two row reductions are single warp instructions (``redux.sync``) and never cross
    warps through shared memory; longer rows take 8 warps."""
    block = next_pow2(f.reduced_length)
    tile = max(2048, block)
    rows = max(1, min(64, tile // block))
    return {"ROWS": rows, "TILE": tile, "WARPS": 4 if block * rows <= 2048 else 8}
