"""Datasheet peaks of known GPUs: the bound a refusal may stand on.

The measured ceilings (:mod:`kernelwright.hardware.ceilings`) say what code on a device reaches,
and speed-of-light fractions are reported against them. They are not physical bounds: on an
H200, cuBLAS's TF32 product measured 400 TFLOP/s at 8192^3 when the ceilings were taken, then
482 TFLOP/s at 4096^3 inside the judge's batches. Refusing a time as faster than light must
only ever fire on the impossible, so the refusal's floor takes, per term, the larger of the
measured ceiling and the device's datasheet peak (dense, at boost clock). For a device this
table does not know, the measured ceilings are widened by :data:`UNKNOWN_DEVICE_MARGIN`.

Notation (as in ``ceilings``): memory_gbps in GB/s (1e9 bytes, read + written); tflops per
precision policy in TFLOP/s, dense: fp32 on the SIMT units, tf32 and bf16 on tensor cores.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kernelwright.hardware.ceilings import Ceilings

UNKNOWN_DEVICE_MARGIN = 1.5
# A time past the floor of these ceilings by more than this is impossible, not noise
SOL_LIMIT = 1.05


@dataclass(frozen=True, slots=True)
class DevicePeaks:
    """One GPU's datasheet numbers."""

    memory_gbps: float
    tflops: Mapping[str, float]


# Matched by substring of the device name, most specific first (an "H100 PCIe" is not an SXM).
KNOWN: tuple[tuple[str, DevicePeaks], ...] = (
    ("H200", DevicePeaks(4800.0, {"fp32": 67.0, "tf32": 494.7, "bf16": 989.4})),
    ("H100 PCIe", DevicePeaks(2000.0, {"fp32": 51.0, "tf32": 378.0, "bf16": 756.0})),
    ("H100 NVL", DevicePeaks(3900.0, {"fp32": 60.0, "tf32": 417.5, "bf16": 835.0})),
    ("H100", DevicePeaks(3350.0, {"fp32": 67.0, "tf32": 494.7, "bf16": 989.4})),
    ("A100", DevicePeaks(2039.0, {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0})),
    ("L40S", DevicePeaks(864.0, {"fp32": 91.6, "tf32": 183.0, "bf16": 366.0})),
)


def peaks_of(device: str) -> DevicePeaks | None:
    """The datasheet peaks of a device by its name (None: not in the table)."""
    for needle, peaks in KNOWN:
        if needle.lower() in device.lower():
            return peaks
    return None


def refusal_ceilings(measured: Ceilings) -> Ceilings:
    """Ceilings no kernel on the device can pass: per term the larger of the measured ceiling
    and the datasheet peak, or the measured ceilings widened where the device is unknown."""
    peaks = peaks_of(measured.device)
    if peaks is None:
        return Ceilings(
            measured.device,
            measured.memory_gbps * UNKNOWN_DEVICE_MARGIN,
            {k: v * UNKNOWN_DEVICE_MARGIN for k, v in measured.matrix_tflops.items()},
            f"{measured.source}, x{UNKNOWN_DEVICE_MARGIN:g} (device not in the datasheet table)",
        )
    rates = dict(measured.matrix_tflops)
    for policy, peak in peaks.tflops.items():
        rates[policy] = max(float(rates.get(policy, 0.0)), peak)
    return Ceilings(
        measured.device,
        max(measured.memory_gbps, peaks.memory_gbps),
        rates,
        f"{measured.source}, or the datasheet peak where higher",
    )
