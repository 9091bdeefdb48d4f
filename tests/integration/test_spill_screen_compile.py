"""The spill screen compiles for sm_90 without a GPU: at KernelBench level-1 59's size the
direct convolution's default (128 positions x 64 channels in 4 warps) spills nothing, and of its
one-parameter moves those that spill (64 x 64 in 4 warps, 128 x 64 in 2) are screened while one
that does not (128 x 32) is left to the harness. Runs in a child without the interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest
from compile_child import run_compile_script

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "kernelbench" / "level1" / "59_conv_standard_3D__asymmetric_input__square_kernel.py"


@pytest.mark.sm90
def test_spilling_moves_of_the_direct_convolution_are_screened() -> None:
    pytest.importorskip("triton")
    script = f"""
        import dataclasses, json
        from kernelwright.design.plan import plan_task
        from kernelwright.records import Candidate, Precision, Status, Timing, TimingStats, Verdict
        from kernelwright.search.proposer import Trial
        from kernelwright.search.spill_screen import SpillScreen
        from kernelwright.task import load_task

        task = load_task({str(TASK)!r}, "full")
        plan = plan_task(task, "cuda", "full", isolate=False)
        design = plan.designs[0]

        def candidate(stage, **params):
            choices = tuple(dataclasses.replace(c, params={{**c.params, **params}})
                            for c in design.choices)
            d = dataclasses.replace(design, choices=choices, stage=stage)
            return Candidate(plan.render(d), origin="template", design=d.to_json(),
                             params=d.params_json())

        ms = TimingStats(2.6, 2.6, 2.6, 0.0, 5)
        best = Trial(1, candidate("structure"), Verdict(Status.CORRECT, True,
                                                         timing=Timing(candidate=ms)))
        screen = SpillScreen.for_gpu(task, "full", Precision.FP32, 90)
        moves = {{"64x64x4": dict(BLOCK_M=64), "128x64x2": dict(WARPS=2),
                  "128x32x4": dict(BLOCK_N=32)}}
        out = {{"skill": design.choices[0].skill, "params": dict(design.choices[0].params)}}
        for name, params in moves.items():
            verdict = screen(candidate("tuning", **params), [best])
            out[name] = None if verdict is None else verdict.message
        print(json.dumps(out))
        """
    out = run_compile_script(script, timeout=600)
    assert out["skill"] == "conv-direct", out
    assert out["params"]["BLOCK_M"] == 128 and out["params"]["BLOCK_N"] == 64, out
    assert out["params"]["WARPS"] == 4, out
    assert out["64x64x4"] is not None and "spill" in out["64x64x4"], out
    assert out["128x64x2"] is not None, out
    assert out["128x32x4"] is None, out
