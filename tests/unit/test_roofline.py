"""The roofline's matrix ceiling per precision policy."""

from __future__ import annotations

import pytest

from kernelwright.hardware.ceilings import Ceilings
from kernelwright.hardware.peaks import UNKNOWN_DEVICE_MARGIN, peaks_of, refusal_ceilings
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


def test_a_refusal_stands_on_the_datasheet_where_the_measured_ceiling_is_lower():
    # cuBLAS's TF32 product ran at 482 TFLOP/s at 4096^3 in the judge's batches, above the
    # measured ceiling: as fast as cuBLAS must never read as faster than light
    square = Work(flops=2 * 4096**3, bytes=3 * 4096 * 4096 * 4)
    cublas_ms = square.flops / 482e12 * 1e3
    measured = speed_of_light(square, H200, "tf32", cublas_ms)
    assert measured.fraction is not None and measured.fraction > 1.05  # reported, not refused
    bound = refusal_ceilings(H200)
    assert bound.matrix_rate("tf32") == pytest.approx(494.7)
    assert bound.memory_gbps == pytest.approx(4800.0)
    physical = speed_of_light(square, bound, "tf32", cublas_ms)
    assert physical.fraction is not None and physical.fraction < 1.0
    impossible = speed_of_light(square, bound, "tf32", square.flops / 700e12 * 1e3)
    assert impossible.fraction is not None and impossible.fraction > 1.05


def test_a_device_without_a_datasheet_entry_gets_a_wide_margin():
    unknown = Ceilings("Some Future GPU", 1000.0, {"fp32": 10.0}, "measured")
    assert peaks_of(unknown.device) is None
    wide = refusal_ceilings(unknown)
    assert wide.memory_gbps == pytest.approx(1000.0 * UNKNOWN_DEVICE_MARGIN)
    assert wide.matrix_rate("fp32") == pytest.approx(10.0 * UNKNOWN_DEVICE_MARGIN)


def test_the_most_specific_name_wins():
    assert peaks_of("NVIDIA H100 PCIe").memory_gbps == pytest.approx(2000.0)  # type: ignore[union-attr]
    assert peaks_of("NVIDIA H100 80GB HBM3").memory_gbps == pytest.approx(3350.0)  # type: ignore[union-attr]
