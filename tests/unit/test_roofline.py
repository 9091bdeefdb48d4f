"""The roofline's matrix ceiling per precision policy."""

from __future__ import annotations

import pytest

from kernelwright.hardware.ceilings import Ceilings
from kernelwright.hardware.roofline import Work, speed_of_light

H200 = Ceilings("NVIDIA H200", 4219.0, {"fp32": 50.8, "tf32": 366.0, "bf16": 720.0}, "measured")


def test_the_fp32_policy_is_bounded_by_the_tf32_rate_its_split_precision_math_can_reach():
    # 3xTF32 products are as accurate as fp32 and ran at 82 TFLOP/s on an H200, above cuBLAS's
    # fp32 50.8: against the plain fp32 rate an honest kernel would read as faster than light
    assert H200.matrix_rate("fp32") == 366.0
    sol = speed_of_light(Work(flops=2 * 1024 * 8192 * 8192, bytes=0), H200, "fp32", 1.674)
    assert sol.bound == "compute" and sol.fraction is not None and sol.fraction < 1.0


def test_other_policies_keep_their_own_rate():
    assert H200.matrix_rate("tf32") == 366.0
    assert H200.matrix_rate("bf16") == 720.0


def test_a_device_measured_without_tf32_keeps_its_fp32_rate():
    cpu = Ceilings("cpu", 20.0, {"fp32": 1.5}, "measured")
    assert cpu.matrix_rate("fp32") == pytest.approx(1.5)
    assert cpu.matrix_rate("bf16") == pytest.approx(1.5)  # unknown policy: fp32's
