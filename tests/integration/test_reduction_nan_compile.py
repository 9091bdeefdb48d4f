"""Max-like reductions compile to NaN-propagating maxima for sm_90 (``max.NaN.f32``: the same
instruction count as the hardware's plain max, which drops NaN), at KernelBench level-1 sizes,
without spilling. Runs in a child without the interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_child import run_compile_script

ROOT = Path(__file__).resolve().parents[2]
TASKS = [
    "level1/49_Max_reduction_over_a_dimension",  # a middle axis of 4095-value rows
    "level1/51_Argmax_over_a_dimension",
    "level1/23_Softmax",  # the online softmax of long rows
]


@pytest.mark.sm90
def test_max_reductions_compile_to_nan_propagating_maxima() -> None:
    pytest.importorskip("triton")
    paths = [str(ROOT / "kernelbench" / f"{t}.py") for t in TASKS]
    script = f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.task import load_task
        rows = []
        for path in {paths!r}:
            plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
            for design in plan.designs[:2]:
                source = plan.render(design)
                for r in compile_check(source, path, "full", keep_ptx=True):
                    rows.append(dict(task=path, skills=list(design.skills), kernel=r.kernel,
                                     ok=r.ok, spill=r.spill_bytes, error=r.error[:300],
                                     nan_max=r.ptx.count("max.NaN.f32"),
                                     plain_max=r.ptx.count("max.f32")))
        print(json.dumps(rows))
        """
    rows = run_compile_script(script, timeout=900)
    assert {Path(r["task"]).stem for r in rows} == {Path(t).name for t in TASKS}
    for r in rows:
        assert r["ok"] and not r["spill"], r
    # every kernel's maxima propagate NaN (the softmax's exponentials use no max at all)
    for task in TASKS[:2]:
        kernels = [r for r in rows if r["task"].endswith(task + ".py")]
        assert all(r["nan_max"] > 0 and r["plain_max"] == 0 for r in kernels), kernels
    assert all(r["plain_max"] == 0 for r in rows), rows
