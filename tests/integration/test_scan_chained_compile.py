"""The chained scan of the masked cumulative sum over time compiles for sm_90 at full size
(ahead of time, no GPU needed): no spills with a chunk held in registers, a pause between polls
of a flag, and the acquiring read of a flag kept (its result picks what the look-back loads)."""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_child import run_compile_script

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "benchmarks" / "level1" / "21_cumsum_masked_time.py"


@pytest.mark.sm90
def test_chained_scan_compiles_without_spills() -> None:
    pytest.importorskip("triton")
    rows = run_compile_script(
        f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.task import load_task
        plan = plan_task(load_task({str(TASK)!r}, "full"), "cuda", "full", isolate=False)
        assert "scan-chained" in plan.designs[0].structure_key(), plan.designs[0].structure_key()
        rows = [[r.kernel, r.ok, r.spill_bytes, r.error[:300], r.ptx or ""]
                for r in compile_check(plan.render(plan.designs[0]), {str(TASK)!r}, "full",
                                       keep_ptx=True)]
        print(json.dumps(rows))
        """
    )
    if all(not ok and "ptxas" in error.lower() for _, ok, _, error, _ in rows):
        pytest.skip("no ptxas for sm_90 in this triton install")
    ((kernel, ok, spill, error, ptx),) = rows
    assert ok, (kernel, error)
    assert spill in (0, None), (kernel, spill)
    assert "nanosleep.u32" in ptx
    assert "ld.global.gpu.acquire" in ptx
    assert ptx.count("atom.global.gpu.release.exch") == 2  # the total, then the prefix
