"""Rows of 1000 fp32 get 16-byte vector loads (sm_90, ahead of time, no GPU needed).

``28_cross_entropy_smoothed`` reads 262144 x 1000 fp32 logits. Triton specialises an integer
argument only when it is 1 or a multiple of 16, so with the row stride and length passed as
plain integers the offsets ``rows * logits_stride0 + cols`` and masks ``cols < n_cols`` have
unknown alignment and every logit is a 4-byte ``ld.global.b32`` (78% of the bandwidth floor on
the H200). The wrappers now pass ``*_ALIGN`` constexprs (KernelArgs.hint); this compiles the
row kernels of the onepass and looped designs at full size with ``compile_check`` (in a child,
without the interpreter) and asserts ``ld.global.v4.b32`` loads and no spills.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_child import run_compile_script

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "benchmarks" / "level1" / "28_cross_entropy_smoothed.py"


@pytest.mark.sm90
def test_cross_entropy_rows_of_1000_floats_load_as_vectors() -> None:
    pytest.importorskip("triton")
    script = f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check, global_loads
        from kernelwright.task import load_task
        path = {str(TASK)!r}
        plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
        rows, done = [], set()
        for design in plan.designs:
            row = design.choice(0).skill  # g0: the kernel over the logits rows
            if row in done or row not in ("row-onepass", "row-looped"):
                continue
            done.add(row)
            for r in compile_check(plan.render(design), path, "full", keep_ptx=True):
                if r.kernel.startswith("reduce_0"):
                    rows.append([row, r.kernel, r.constexprs, r.ok, r.spill_bytes,
                                 global_loads(r.ptx), r.error[:300]])
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=900)
    assert rows, "no row kernel was compiled"
    if all(not ok and "ptxas" in error.lower() for *_, ok, _, _, error in rows):
        pytest.skip("no ptxas for sm_90 in this triton install")
    assert {r[0] for r in rows} == {"row-onepass", "row-looped"}, rows
    for schedule, kernel, consts, ok, spill, loads, error in rows:
        assert ok, (schedule, kernel, error)
        assert "LOGITS_STRIDE0_ALIGN=8" in consts and "N_COLS_ALIGN=8" in consts, consts
        assert spill in (0, None), (schedule, kernel, spill)
        assert loads.get("ld.global.v4.b32", 0) > 0, (schedule, kernel, loads)
