"""The scan defaults: pure Python, no Triton."""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import defaults_for


def test_scan_defaults_pipeline_the_walk() -> None:
    row = defaults_for("scan_row", GroupFacts("scan", "row", (16384, 8192), 8192, 16384))
    assert row == {"BLOCK_N": 2048, "ROWS": 1, "WARPS": 8, "STAGES": 3}
    short = defaults_for("scan_row", GroupFacts("scan", "row", (4096, 100), 100, 4096))
    assert short["BLOCK_N"] * short["ROWS"] == 2048
    col = defaults_for(
        "scan_column", GroupFacts("scan", "column", (32, 4096, 1024), 4096, 32768, 1024)
    )
    # 128 positions per warp: each thread scans 4 whole columns in registers
    assert col["COLS"] == 128 * col["WARPS"] and col["STAGES"] >= 3
