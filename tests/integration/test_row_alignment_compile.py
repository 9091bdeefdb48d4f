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


@pytest.mark.sm90
def test_per_channel_parameters_load_once_a_row() -> None:
    """BatchNorm in eval (KernelBench level 1, 64 x 64 x 512 x 512): the element-wise rows kernel
    holds 4 rows of 1024 columns in 8 warps, 16 values a thread over 4 rows. Each of the four
    per-channel parameters is one value a row: loaded as a [BLOCK_M] vector and expanded it
    takes 4 scalar loads a thread (16 in all), where a [BLOCK_M, 1] load in the tile's layout
    took one a value the thread holds (64); the input stays 16-byte vectors."""
    pytest.importorskip("triton")
    path = ROOT / "kernelbench" / "level1" / "33_BatchNorm.py"
    script = f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check, global_loads
        from kernelwright.task import load_task
        path = {str(path)!r}
        plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
        rows = [[r.kernel, r.ok, r.spill_bytes, global_loads(r.ptx), r.error[:300]]
                for r in compile_check(plan.render(plan.designs[0]), path, "full", keep_ptx=True)]
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=600)
    assert len(rows) == 1, rows
    ((kernel, ok, spill, loads, error),) = rows
    if not ok and "ptxas" in error.lower():
        pytest.skip("no ptxas for sm_90 in this triton install")
    assert ok and spill in (0, None), (kernel, error, spill)
    assert loads == {"ld.global.v4.b32": 4, "ld.global.b32": 16}, loads
