"""Shape-aware default parameters: the expert's first guess before any tuning.

Each heuristic maps a group's facts to the template's parameters. The numbers follow what fast
memory-bound Triton kernels use on Hopper-class GPUs (H100/H200): 16-byte loads per thread,
4 warps for blocks up to 2K elements, 8 up to 8K, 16 up to 32K, 32 beyond (Liger's and Triton's
tutorials' rule); several short rows per program so a program moves at least ~16 KB; contiguous
tiles at least 32 elements wide along the fast dimension (one 128-byte line per row); column
sweeps over few reduced rows of wide contiguous tiles (8 x 512), reduced per lane; around four
programs per SM for split reductions.

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


# row block -> (rows a program, warps) for rows reduced to per-row results (see row_onepass)
LOSS_ROW_TILES = {1024: (2, 2), 2048: (4, 8)}


@heuristic("row_onepass")
def row_onepass(f: GroupFacts) -> dict[str, int]:
    block = next_pow2(f.reduced_length)
    rows = max(1, min(64, 4096 // block))
    # Rows of up to 1024 elements: at most one warp per row, so each row's reductions are warp
    # shuffles, never a shared-memory round trip with barriers. Measured on the H200 (1000-class
    # cross-entropy, 4 rows of 1024 per program): 4 warps 0.31 ms, 8 warps 0.46 ms.
    warps = min(8, rows) if block <= 1024 else warps_for(block * rows)
    if not f.full_outputs and block in LOSS_ROW_TILES:
        # Rows reduced to per-row results only (a loss): 32 values a thread. Measured on the
        # H200 (40 sampled configurations each): smoothed cross-entropy over 1000 classes, 2
        # rows in 2 warps 0.266 ms against 0.298 for 4 rows in 4 warps; KL over 2048 classes
        # (two inputs), 4 rows in 8 warps 0.297 ms against 0.312 for 2 rows in 8 warps.
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
    and swept twice (a norm's statistics, then its write) get 16 warps over blocks of 4096: half
    as many rows resident, 8 elements per thread a step. Measured on the H200 (group norm 1536
    rows of 131072, instance norm 4096 of 65536): 0.589 and 0.757 ms, against 0.615 and 0.783
    with blocks of 8192 (group norm with 8 warps over 4096: 0.628)."""
    if f.folded_passes > 1 and f.reduced_length > 32768:
        return {"LOOP_BLOCK": 4096, "LOOP_ROWS": 1, "LOOP_WARPS": 16}
    if f.reduced_length > 32768:
        # One sweep of rows too long for one pass (a large-vocabulary cross-entropy): two rows
        # of 1024 per program in 16 warps, one 16-byte load per thread a step. Measured on the
        # H200 (2560 rows of 128256): 0.335 ms against 0.367 ms for one row of 4096 in 8 warps.
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
    block_r = next_pow2(f.reduced_length)
    cols = max(32, min(256, 8192 // block_r))
    warps = warps_for(block_r * cols)
    if f.online_pattern:
        # A softmax over the column (an exp per element, a log or division per position) is
        # issue-bound at 16 warps: 16 positions in 4 warps let more programs share an SM.
        # Measured on the H200 (log-softmax over 150 of 16 x 150 x 65536): 256 x 16 tiles in
        # 4 warps 0.355 ms, 256 x 32 in 16 warps 0.420 ms; an L2 norm (no exp) is the other way
        # round (0.491 vs 0.460 ms), so only the softmax-like columns take the narrow tile.
        cols, warps = 16, 4
    elif block_r <= 64:
        # Short columns (no exp): 64 positions in 4 warps. Measured on the H200 (RMS over 64
        # features of 32 x 64 x 65536, 40 sampled configurations, seventh session): 64 x 64 tiles
        # in 4 warps 0.261 ms (97% of the bytes floor), 64 x 128 in 16 warps (the rule above)
        # 0.355 ms. Columns of 256 go the other way (the L2 norm above), so only short ones.
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
    block_r = max(4, min(128, 4096 // cols))  # narrow tiles take more rows: 16 KB a step
    if cols < min(widest, 128) and not f.indexed:
        # Few positions, long columns (a min over 4095 of 64 x 4095 x 1023): few programs, so
        # each takes 16 warps over 2048 elements a step to keep loads in flight. Measured on the
        # H200 (40 sampled configurations, seventh session): 32 x 64 in 16 warps 0.272 ms (93%),
        # 32 x 128 in 4 warps (the rule below, 512 programs) 0.398 ms, slower than eager.
        return {"LOOP_BLOCK": 2048 // cols, "LOOP_COLS": cols, "LOOP_WARPS": 16}
    if f.indexed:
        # argmax/argmin keep an index beside each lane's value: half the tile in the same
        # registers. Measured on the H200 (argmax over 171 of 64 x 171 x 65536): 4 x 512 in 2
        # warps 0.665 ms, 8 x 512 in 4 warps 0.82 ms, 64 x 512 6.1 ms.
        block_r = max(4, block_r // 2)
    return {
        "LOOP_BLOCK": block_r,
        "LOOP_COLS": cols,
        "LOOP_WARPS": max(2, min(8, block_r * cols // 1024)),
    }


@heuristic("relay")
def relay(f: GroupFacts) -> dict[str, int]:
    """Slices of 64K elements (256 KB of fp32) in blocks of 2048 by 8 warps, each program writing
    the row of the team 4 tickets earlier. Measured on the H200: the best of 40 sampled
    configurations for group norm (0.616 ms) and within 1% of the best for instance norm;
    slices of 8K-16K took 1-35 ms (more programs, more synchronisation)."""
    return {"SLICE": 65536, "LOOP_BLOCK": 2048, "LOOP_WARPS": 8, "LAG": 4}


@heuristic("team")
def team(f: GroupFacts) -> dict[str, int]:
    """Slices of 8192 elements in 4 warps (64 a thread). Measured on the H200 over the whole
    space (25 configurations) of six norms, rows of 65536-262144 values, 768-4096 rows, group
    and instance norms (sixth session): the best in five and 0.3% behind the best (2048 in one
    warp) in the sixth, the best geometric mean (1.0005 of each shape's best; 2048 x 1: 1.016).
    Configurations with 64 elements a thread led throughout; 8-16 warps over small slices were
    2-8x slower."""
    return {"TEAM_SLICE": 8192, "TEAM_WARPS": 4}


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
    # Columns: 64 x 512 tiles with 16 warps and ~16 programs per SM. Measured on the H200 (mean
    # over 262144 rows of 4096 columns): 0.965 ms, against 1.133 ms for 8 x 512 tiles with 4
    # warps at the same split and 1.716 ms with 4 programs per SM.
    cols = max(32, min(512, next_pow2(f.inner_length)))
    return {
        "LOOP_BLOCK": max(8, min(64, 32768 // cols)),
        "LOOP_COLS": cols,
        "LOOP_WARPS": 16,
        "SPLIT_PROGRAMS": min(2048, 16 * f.sm_count),
    }


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
    through shared memory). Measured on the H200 (masked cumsum over 4096 steps of 32 x 1024):
    24 sampled configurations (fifth session) put 32 x 256 first, 0.316 ms in 4 warps, against
    0.322-0.326 for 16 x 256 in 1-2 warps and 0.325 for the best column walk; two probes in the
    sixth session (``scripts/gpu_probe_chained.py``) timed 32 x 256 in 2 warps at 0.309 and
    0.311 against 0.317 and 0.318 in 4 warps (which stage 32 KB of shared memory for the scan);
    8 warps or 32 positions were slower (0.38-0.87)."""
    cols = max(32, min(256, next_pow2(f.inner_length)))
    return {"BLOCK_S": 32, "COLS": cols, "WARPS": max(1, min(2, 32 * cols // 4096))}


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


@heuristic("pool")
def pool(f: GroupFacts) -> dict[str, int]:
    """A program owns ROWS x BLOCK_W outputs per step and STEPS unrolled steps along the outer
    pooled axis. Measured on the H200 (scripts/gpu_schedule_sweep.py, BENCHMARKS.md):

    - 1-D pooling (rows are planes, nothing rolls): one plane row of 512 outputs per program
      and one warp, 0.283 ms against 0.497 ms for 8 rows x 512 with 8 warps (96 x 128 x 16384);
    - 2-D and 3-D: rows of up to 128 outputs, 4 rows a step, 8 steps: the 3-D pool (16 x 32 x
      64 x 128 x 128, 64 outputs wide) ran in 0.645 ms so, against 1.217 ms with 8 rows a step
      and 4 steps; 2-D pooling at 112-128 wide reached 94% of the bytes floor.
    """
    width = f.domain[-1] if f.domain else 64
    if len(f.domain) < 4 or f.domain[-2] == 1:
        return {"BLOCK_W": max(16, min(512, next_pow2(width))), "ROWS": 1, "STEPS": 1, "WARPS": 1}
    return {"BLOCK_W": max(16, min(128, next_pow2(width))), "ROWS": 4, "STEPS": 8, "WARPS": 8}
