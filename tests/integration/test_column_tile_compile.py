"""A tuned configuration must not make a column kernel fail to compile.

On the H200, stage-2 tuning gave the column split of ``16_mean_columns`` LOOP_BLOCK=4096 (a
value meant for row sweeps) with LOOP_COLS=512: a 2M-element register tile, a compile_error.
The wrapper now clips the reduced rows of a column tile so it fits; this compiles that exact
configuration for sm_90 at full size (``compile_check`` in a child, without the interpreter).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_child import run_compile_script

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "benchmarks" / "level1" / "16_mean_columns.py"


@pytest.mark.sm90
def test_column_split_with_a_row_sized_block_still_compiles() -> None:
    pytest.importorskip("triton")
    script = f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.design.choices import Design
        from kernelwright.task import load_task
        plan = plan_task(load_task({str(TASK)!r}, "full"), "cuda", "full", isolate=False)
        (base,) = [d for d in plan.designs if "split" in d.structure_key()]
        params = {{**base.choices[0].params, "LOOP_BLOCK": 4096, "LOOP_COLS": 512}}
        design = Design((base.choices[0].with_params(params),), stage="tuning")
        source = plan.render(design)
        rows = [[r.kernel, r.ok, r.error[:300]]
                for r in compile_check(source, {str(TASK)!r}, "full")]
        print(json.dumps({{"clipped": "32768 // BLOCK_P" in source, "rows": rows}}))
        """
    found = run_compile_script(script, timeout=600)
    assert found["clipped"]
    assert found["rows"], "no kernel was compiled"
    for kernel, ok, error in found["rows"]:
        assert ok, (kernel, error)
