"""A synthetic measured space for the tuning tests (no GPU, no shared data)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

PARAMS = {
    "block_x": [16, 32, 64, 128, 256],
    "block_y": [1, 2, 4, 8],
    "tile": [1, 2, 3, 4],
    "use_smem": [0, 1],
}
RESTRICTIONS = ("block_x * block_y <= 512",)


def synthetic_time(bx: int, by: int, tile: int, smem: int) -> float | None:
    """A GPU-like landscape: an optimum near 128 threads x tile 2 with smem, a register cliff."""
    threads = bx * by
    if threads * tile > 1024:
        return None  # "RuntimeFailedConfig": too many registers per block
    t = (
        1.0
        + 0.3 * (math.log2(threads) - 7.0) ** 2
        + 0.25 * (tile - 2) ** 2
        + 0.1 * abs(math.log2(by) - 1)
    )
    t *= 0.7 if smem else 1.0
    return round(t, 6)


def write_space_csv(path: Path, with_failures: bool = True) -> Path:
    names = list(PARAMS)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([*names, "time_ms", "time_std_ms", "n_rep", "compile_ms", "status"])
        for bx in PARAMS["block_x"]:
            for by in PARAMS["block_y"]:
                if bx * by > 512:
                    continue  # excluded by the restriction: absent from the file
                for tile in PARAMS["tile"]:
                    for smem in PARAMS["use_smem"]:
                        t = synthetic_time(bx, by, tile, smem)
                        if t is None and not with_failures:
                            t = 50.0
                        if t is None:
                            w.writerow([bx, by, tile, smem, "", "", 0, 1.0, "RuntimeFailedConfig"])
                        else:
                            w.writerow([bx, by, tile, smem, t, 0.01, 32, 1.0, "ok"])
    return path
