"""Default parameters of the reduction skills: the expert's first guess before any tuning.

The rules follow fast memory-bound Triton kernels on Hopper (16-byte loads per thread; 4 warps
up to 2K elements a program, 8 to 8K, 16 to 32K, 32 beyond; a program moves at least ~16 KB);
where a sweep on an H200 measured a better setting the rule follows it, and the measurement is
in ``measurements.csv`` beside the skill files (skill, rule, workload, settings compared, ms).
"""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2, warps_for

# row block -> (rows a program, warps) for rows reduced to per-row results (see row_onepass)
LOSS_ROW_TILES = {1024: (2, 2), 2048: (4, 8)}


@heuristic("row_onepass")
def row_onepass(f: GroupFacts) -> dict[str, int]:
    """Whole rows, several short ones per program (a 4096-element tile)."""
    block = next_pow2(f.reduced_length)
    rows = max(1, min(64, 4096 // block))
    # Rows of up to 1024 elements: at most one warp per row, so each row's reductions are warp
    # shuffles, never a shared-memory round trip with barriers.
    warps = min(8, rows) if block <= 1024 else warps_for(block * rows)
    if not f.full_outputs and block in LOSS_ROW_TILES:
        # Rows reduced to per-row results only (a loss): 32 values a thread.
        rows, warps = LOSS_ROW_TILES[block]
    return {
        "ONEPASS_MAX": max(16384, block),
        "TILE": max(4096, block * rows),
        "ROWS": rows,
        "WARPS": warps,
        "LOOP_BLOCK": 4096,
        "LOOP_ROWS": 1,
        "LOOP_WARPS": 8,
    }


@heuristic("row_looped")
def row_looped(f: GroupFacts) -> dict[str, int]:
    """Blocks of 4096 with 8 warps (16 elements per thread a step). Rows too long for registers
    and swept twice (a norm's statistics, then its write) get 16 warps over blocks of 4096:
    half as many rows resident, 8 elements per thread a step."""
    if f.folded_passes > 1 and f.reduced_length > 32768:
        return {"LOOP_BLOCK": 4096, "LOOP_ROWS": 1, "LOOP_WARPS": 16}
    if f.reduced_length > 32768:
        # One sweep of rows too long for one pass (a large-vocabulary cross-entropy): two rows
        # of 1024 per program in 16 warps, one 16-byte load per thread a step.
        return {"LOOP_BLOCK": 1024, "LOOP_ROWS": 2, "LOOP_WARPS": 16}
    block = min(4096, next_pow2(f.reduced_length))
    rows = max(1, min(16, 2048 // block))
    return {
        "LOOP_BLOCK": block,
        "LOOP_ROWS": rows,
        "LOOP_WARPS": warps_for(block * rows) if block < 4096 else 8,
    }


@heuristic("column_onepass")
def column_onepass(f: GroupFacts) -> dict[str, int]:
    """The whole reduced extent by up to 256 positions (8K elements a tile)."""
    block_r = next_pow2(f.reduced_length)
    cols = max(32, min(256, 8192 // block_r))
    warps = warps_for(block_r * cols)
    if f.online_pattern:
        # A softmax over the column (an exp per element, a log or division per position) is
        # issue-bound at 16 warps: 16 positions in 4 warps let more programs share an SM. A
        # norm without an exp is faster with the wide tile, so only softmax-like columns narrow.
        cols, warps = 16, 4
    elif block_r <= 64:
        # Short columns (no exp): 64 positions in 4 warps. Columns of 256 go the other way (the
        # norm above), so only short ones.
        cols, warps = 64, 4
    loop = column_looped(f)
    return {
        "ONEPASS_MAX": max(1024, block_r),
        "TILE": block_r * cols,
        "COLS": cols,
        "WARPS": warps,
        "LOOP_BLOCK": loop["LOOP_BLOCK"],
        "LOOP_COLS": loop["LOOP_COLS"],
        "LOOP_WARPS": loop["LOOP_WARPS"],
    }


@heuristic("column_looped")
def column_looped(f: GroupFacts) -> dict[str, int]:
    """Wide contiguous tiles, few reduced rows: each thread holds 4 contiguous positions of
    every reduced row of the tile, so the per-lane accumulators reduce in registers and the
    only cross-thread reduction is the last one. A tile of 4096 elements moves 16 KB a step;
    the positions narrow (and the reduced rows grow) until there are four programs per SM."""
    return column_tile(f, narrow=True)


def column_tile(f: GroupFacts, narrow: bool) -> dict[str, int]:
    """``LOOP_BLOCK`` reduced rows x ``LOOP_COLS`` positions and the warps for them; ``narrow``
    trades width for programs when positions are few (a split adds programs instead)."""
    widest = cols = max(32, min(512, next_pow2(f.inner_length)))
    while narrow and cols > 32 and -(-f.parallel_length // cols) < 4 * f.sm_count:
        cols //= 2
    if narrow and cols == widest >= 64 and not rows_aligned(f):
        # Rows that start off 16-byte boundaries (an odd inner extent of fp32) load one value
        # a lane whatever the tile, so a wide tile only costs registers, and some wide tiles
        # fall off a cliff: with positions enough, 64 of them by 16 reduced rows in 8 warps
        # (measurements.csv; few positions keep the rule below).
        return {"LOOP_BLOCK": 16, "LOOP_COLS": 64, "LOOP_WARPS": 8}
    block_r = max(4, min(128, 4096 // cols))  # narrow tiles take more rows: 16 KB a step
    if cols < min(widest, 128) and not f.indexed:
        # Few positions, long columns: few programs, so each takes 16 warps over 2048 elements
        # a step to keep loads in flight.
        return {"LOOP_BLOCK": 2048 // cols, "LOOP_COLS": cols, "LOOP_WARPS": 16}
    if f.indexed:
        # argmax/argmin keep an index beside each lane's value: half the tile in the same
        # registers.
        block_r = max(4, block_r // 2)
    return {
        "LOOP_BLOCK": block_r,
        "LOOP_COLS": cols,
        "LOOP_WARPS": max(2, min(8, block_r * cols // 1024)),
    }


def rows_aligned(f: GroupFacts) -> bool:
    """Whether every contiguous run of ``inner_length`` positions of each dtype the group reads
    spans a multiple of 16 bytes (so that each reduced row starts 16-byte aligned and loads
    can be vectors); True when the dtypes are unknown."""
    return all(f.inner_length * dtype_bytes(d) % 16 == 0 for d in f.dtypes)


def dtype_bytes(dtype: str) -> int:
    """Bytes of a value of a torch dtype named like ``float32``, ``bfloat16`` or ``bool``."""
    bits = "".join(ch for ch in dtype if ch.isdigit())
    return max(1, int(bits) // 8) if bits else 1


@heuristic("relay")
def relay(f: GroupFacts) -> dict[str, int]:
    """Slices of 64K elements (256 KB of fp32) in blocks of 2048 by 8 warps, each program
    writing the row of the team 4 tickets earlier; smaller slices multiply the
    synchronisation."""
    return {"SLICE": 65536, "LOOP_BLOCK": 2048, "LOOP_WARPS": 8, "LAG": 4}


@heuristic("split_stats")
def split_stats(f: GroupFacts) -> dict[str, int]:
    """Slices of 64K elements (256 KB of fp32), halved down to 8K until the rows' slices give
    at least four programs per SM; blocks of 1024 in 4 warps (8 values a thread), the best of 40
    configurations on 16 rows of 4 M, 10% ahead of 2048 in 8 warps (measurements.csv)."""
    slice_ = 65536
    while slice_ > 8192 and f.parallel_length * -(-f.reduced_length // slice_) < 4 * f.sm_count:
        slice_ //= 2
    return {"SLICE": slice_, "LOOP_BLOCK": 1024, "LOOP_WARPS": 4}


@heuristic("team")
def team(f: GroupFacts) -> dict[str, int]:
    """Slices of 8192 elements in 4 warps (64 a thread): small programs; 8-16 warps over small
    slices are several times slower. A row whose team of 8192-element slices would outnumber
    the SMs takes slices of 16384 in 8 warps (still 64 a thread), so the team stays resident
    instead of falling back to the looped kernel: group norm over 896 rows of 2 M, 5.55 ms
    against 6.61 (and 7.15 for the best looped kernel; sweeps/long_rows.csv)."""
    slice_ = 8192
    while slice_ < 16384 and -(-f.reduced_length // slice_) > f.sm_count:
        slice_ *= 2
    return {"TEAM_SLICE": slice_, "TEAM_WARPS": slice_ // 2048}


@heuristic("split")
def split(f: GroupFacts) -> dict[str, int]:
    """Rows: blocks of up to 2048 in 16 warps (4 values a thread), about four programs per SM:
    over three losses to a scalar (27 configurations each, sweeps/split_reduction.csv) the
    best or within 0.7% of it, and 5% faster than 4096 in 8 warps on KL divergence, whose two
    logarithms an element want more warps in flight. Columns: 64 x 512 tiles in 16 warps, about
    sixteen programs per SM."""
    if f.schedule == "row":
        block = min(2048, next_pow2(f.reduced_length))
        return {
            "LOOP_BLOCK": block,
            "LOOP_ROWS": 1,
            "LOOP_WARPS": 16,
            "SPLIT_PROGRAMS": 4 * f.sm_count,
        }
    cols = max(32, min(512, next_pow2(f.inner_length)))
    return {
        "LOOP_BLOCK": max(8, min(64, 32768 // cols)),
        "LOOP_COLS": cols,
        "LOOP_WARPS": 16,
        "SPLIT_PROGRAMS": min(2048, 16 * f.sm_count),
    }
