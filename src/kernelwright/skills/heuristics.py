"""Shape-aware default parameters: the expert's first guess before any tuning.

Each heuristic maps a group's facts to the template's parameters. The numbers follow what fast
memory-bound Triton kernels use on Hopper-class GPUs (H100/H200): 16-byte loads per thread,
4 warps for blocks up to 2K elements, 8 up to 8K, 16 up to 32K, 32 beyond (Liger's and Triton's
tutorials' rule); several short rows per program so a program moves at least ~16 KB; contiguous
tiles at least 32 elements wide along the fast dimension (one 128-byte line per row); around
four programs per SM for split reductions.

Registered by name; a skill file names its heuristic (``defaults = "row_onepass"``).
"""

from __future__ import annotations

from collections.abc import Callable

from kernelwright.errors import ConfigError
from kernelwright.skills.conditions import GroupFacts

Heuristic = Callable[[GroupFacts], dict[str, int]]
HEURISTICS: dict[str, Heuristic] = {}


def heuristic(name: str) -> Callable[[Heuristic], Heuristic]:
    """Register a default-parameter heuristic (duplicates are refused)."""

    def deco(fn: Heuristic) -> Heuristic:
        if name in HEURISTICS:
            raise ConfigError(f"heuristic {name!r} is already registered")
        HEURISTICS[name] = fn
        return fn

    return deco


def defaults_for(name: str, facts: GroupFacts) -> dict[str, int]:
    """Run heuristic ``name`` (empty dict for no heuristic)."""
    if not name:
        return {}
    fn = HEURISTICS.get(name)
    if fn is None:
        raise ConfigError(f"unknown heuristic {name!r}; known: {', '.join(sorted(HEURISTICS))}")
    return fn(facts)


def next_pow2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1)."""
    p = 1
    while p < n:
        p *= 2
    return p


def warps_for(block: int) -> int:
    """num_warps for a block of ``block`` fp32 elements."""
    if block >= 32768:
        return 32
    if block >= 8192:
        return 16
    if block >= 2048:
        return 8
    return 4


@heuristic("elementwise_flat")
def elementwise_flat(f: GroupFacts) -> dict[str, int]:
    block = 1024 if f.numel >= 1 << 20 else max(128, min(1024, next_pow2(f.numel)))
    return {"BLOCK": block, "WARPS": 4}


@heuristic("elementwise_tiled")
def elementwise_tiled(f: GroupFacts) -> dict[str, int]:
    block_n = max(32, min(1024, next_pow2(f.inner_length)))  # the contiguous run of columns
    return {"BLOCK_N": block_n, "TILE": 4096, "WARPS": 8}  # 16 elements per thread


@heuristic("row_onepass")
def row_onepass(f: GroupFacts) -> dict[str, int]:
    block = next_pow2(f.reduced_length)
    rows = max(1, min(64, 4096 // block))
    return {
        "ONEPASS_MAX": max(16384, block),
        "TILE": max(4096, block),
        "ROWS": rows,
        "WARPS": warps_for(block * rows),
        "LOOP_BLOCK": 4096,
        "LOOP_ROWS": 1,
        "LOOP_WARPS": 8,
    }


@heuristic("row_looped")
def row_looped(f: GroupFacts) -> dict[str, int]:
    block = min(4096, next_pow2(f.reduced_length))
    rows = max(1, min(16, 2048 // block))
    return {
        "LOOP_BLOCK": block,
        "LOOP_ROWS": rows,
        "LOOP_WARPS": warps_for(block * rows) if block < 4096 else 8,
    }


@heuristic("column_onepass")
def column_onepass(f: GroupFacts) -> dict[str, int]:
    block_r = next_pow2(f.reduced_length)
    cols = max(32, min(256, 8192 // block_r))
    return {
        "ONEPASS_MAX": max(1024, block_r),
        "TILE": block_r * cols,
        "COLS": cols,
        "WARPS": warps_for(block_r * cols),
        "LOOP_BLOCK": 32,
        "LOOP_COLS": 128,
        "LOOP_WARPS": 4,
    }


@heuristic("column_looped")
def column_looped(f: GroupFacts) -> dict[str, int]:
    cols = max(32, min(128, next_pow2(f.inner_length)))
    block_r = max(8, min(64, 4096 // cols))
    return {"LOOP_BLOCK": block_r, "LOOP_COLS": cols, "LOOP_WARPS": 4}


@heuristic("split")
def split(f: GroupFacts) -> dict[str, int]:
    if f.schedule == "row":
        block = min(4096, next_pow2(f.reduced_length))
        return {
            "LOOP_BLOCK": block,
            "LOOP_ROWS": 1,
            "LOOP_WARPS": 8,
            "SPLIT_PROGRAMS": 4 * f.sm_count,
        }
    cols = max(32, min(128, next_pow2(f.inner_length)))
    return {"LOOP_BLOCK": 32, "LOOP_COLS": cols, "LOOP_WARPS": 4, "SPLIT_PROGRAMS": 4 * f.sm_count}


@heuristic("scan_row")
def scan_row(f: GroupFacts) -> dict[str, int]:
    block = max(64, min(2048, next_pow2(f.reduced_length)))
    return {"BLOCK_N": block, "ROWS": 1, "WARPS": 4 if block <= 1024 else 8}


@heuristic("scan_column")
def scan_column(f: GroupFacts) -> dict[str, int]:
    cols = max(16, min(64, next_pow2(f.inner_length)))
    return {"BLOCK_S": 32, "COLS": cols, "WARPS": 4}


@heuristic("pool")
def pool(f: GroupFacts) -> dict[str, int]:
    width = f.domain[-1] if f.domain else 64
    block_w = max(16, min(128, next_pow2(width)))
    return {"BLOCK_W": block_w, "BLOCK_H": max(1, min(8, 512 // block_w)), "WARPS": 4}
