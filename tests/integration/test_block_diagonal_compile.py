"""The block-diagonal product of a grouped transposed convolution (KernelBench level-1 72: 4
groups of 8 output channels) compiles for sm_90 without a GPU, its phase kernel without
spilling registers. Runs in a child without the interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_child import run_compile_script

ROOT = Path(__file__).resolve().parents[2]
TASK = next((ROOT / "kernelbench" / "level1").glob("72_*.py"))


@pytest.mark.sm90
def test_the_block_diagonal_phase_kernel_compiles_for_sm90() -> None:
    pytest.importorskip("triton")
    script = f"""
        import json
        from kernelwright.design.compile_check import compile_check
        from kernelwright.design.plan import plan_task
        from kernelwright.task import load_task

        plan = plan_task(load_task({str(TASK)!r}, "full"), "cuda", "full", isolate=False)
        design = plan.designs[0]
        source = plan.render(design)
        reports = compile_check(source, {str(TASK)!r}, "full", arch=90)
        print(json.dumps({{"skill": design.choices[0].skill,
                          "dense": "block-diagonal weight" in source,
                          "kernels": [[r.kernel, r.ok, r.spill_bytes] for r in reports]}}))
        """
    out = run_compile_script(script, timeout=600)
    assert out["skill"] == "conv-transposed-implicit-gemm" and out["dense"], out
    kernels = {name: (ok, spilled) for name, ok, spilled in out["kernels"]}
    assert kernels["conv_0_kernel"] == (True, 0), out
