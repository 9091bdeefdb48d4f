"""The pooling and scan kernels of the suite compile for sm_90 at full size without spilling.

Pooling kernels take every tap from registers, so they use no shared memory (a layout
conversion through shared memory would show as shared bytes); scan kernels use it only for
their pipeline stages. Runs ``compile_check`` in a child without the interpreter.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_child import run_compile_script

ROOT = Path(__file__).resolve().parents[2]
TASKS = [
    "23_avg_pool1d",
    "24_max_pool2d",
    "25_avg_pool2d_same",
    "26_max_pool3d",
    "20_cumsum_reverse",
    "21_cumsum_masked_time",
]


@pytest.mark.sm90
def test_pool_and_scan_kernels_compile_without_spills() -> None:
    pytest.importorskip("triton")
    paths = [str(ROOT / "benchmarks" / "level1" / f"{t}.py") for t in TASKS]
    script = f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.task import load_task
        rows = []
        for path in {paths!r}:
            plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
            for r in compile_check(plan.render(plan.designs[0]), path, "full"):
                rows.append([path, r.kernel, r.ok, r.spill_bytes, r.shared_bytes, r.error[:300]])
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=600)
    assert len(rows) == len(TASKS), rows
    for path, kernel, ok, spill, shared, error in rows:
        assert ok, (path, kernel, error)
        assert spill in (0, None), (path, kernel, spill)
        if "pool" in Path(path).stem:
            assert shared == 0, (path, kernel, shared)
