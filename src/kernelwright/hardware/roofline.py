"""The roofline floor: no kernel for a task runs much faster than this.

Notation:
    flops       matrix-unit FLOPs of the reference forward (PyTorch's flop counter: GEMM,
                convolution, attention, a causal attention's scores past the diagonal left
                out); element-wise arithmetic is not counted
    bytes       minimum device-memory traffic: every input, parameter and buffer read once,
                every output written once
    floor_ms    max(bytes / memory_gbps, flops / matrix_tflops), the larger term names the bound;
                matrix_tflops is the policy's ceiling (``Ceilings.matrix_rate``: under fp32, the
                TF32 rate, which split-precision fp32-accurate products can approach)
    fraction    floor_ms / measured_ms: 1.0 is the speed of light; above 1.0 is impossible
                unless the byte count over-counts (an input that is not fully read), so a
                fraction above 1 is flagged for a person to look at, never celebrated
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelwright.hardware.ceilings import Ceilings
from kernelwright.records import SpeedOfLight


@dataclass(frozen=True, slots=True)
class Work:
    """The minimum work of a task: a roofline's input."""

    flops: int
    bytes: int


def speed_of_light(
    work: Work, ceilings: Ceilings, precision: str, measured_ms: float | None
) -> SpeedOfLight:
    """Floor time for ``work`` on a device and the fraction ``measured_ms`` reaches."""
    rate = ceilings.matrix_rate(precision)
    memory_ms = work.bytes / (ceilings.memory_gbps * 1e9) * 1e3
    compute_ms = work.flops / (rate * 1e12) * 1e3 if rate > 0 else 0.0
    floor = max(memory_ms, compute_ms)
    bound = "compute" if compute_ms > memory_ms else "memory"
    fraction = floor / measured_ms if measured_ms and measured_ms > 0 else None
    return SpeedOfLight(
        flops=work.flops,
        bytes=work.bytes,
        floor_ms=floor,
        bound=bound,
        fraction=fraction,
        memory_gbps=ceilings.memory_gbps,
        matrix_tflops=rate,
        ceilings=f"{ceilings.device}, {ceilings.source}",
    )
