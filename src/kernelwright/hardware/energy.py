"""Energy per call from the GPU's own energy counter (NVML), and what a run optimises for.

NVML's ``nvmlDeviceGetTotalEnergyConsumption`` is a counter of millijoules the board has drawn
since the driver loaded (Volta and later). The judge reads it on each side of every timed batch,
outside the window its clock measures, and keeps the sums:

    E = sum over batches of (counter after - counter before)     [mJ]
    T = sum over batches of (after - before, wall)               [ms]
    P = E / T                                                    [W = mJ / ms]
    energy per call = P x (the call's median time)               [mJ]

The window holds the judge's own fixed work (writing inputs, flushing the L2), which the clock
subtracts from the time; energy is charged by the same share, at the window's mean power. The
counter moves in steps (about every 100 ms on an H200, and a read costs about 4 ms there); read
at instants that do not depend on its phase, each step is as likely to fall inside a window as
the window's length says, so the sums are unbiased, and their error, reported with them as the
standard error of the mean power over the windows, shrinks with the number of windows. A run
that ranks by energy times more batches for it.

Eager PyTorch and torch.compile are measured the same way, in their own processes, so energy
ratios are like-for-like. Nothing the candidate's process reports enters these numbers: the
judge owns the counter as it owns the clock.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any, Protocol

SOURCE = "NVML total energy counter, read by the judge around each timed batch"
# The windows' total a ranking by energy needs (a baseline cached with fewer is timed again)
RANKING_WINDOW_MS = 1000.0


class Objective(enum.StrEnum):
    """What a run ranks candidates by: the median time of a call, its energy, or their product
    (energy-delay product: a kernel that saves energy by running slowly gains nothing)."""

    TIME = "time"
    ENERGY = "energy"
    EDP = "edp"

    @property
    def needs_energy(self) -> bool:
        return self is not Objective.TIME

    @property
    def unit(self) -> str:
        return {"time": "ms", "energy": "mJ", "edp": "mJ*ms"}[self.value]


class EnergyMeter(Protocol):
    """A cumulative energy counter of one device (the NVML meter, or a stand-in in tests)."""

    def millijoules(self) -> float:
        """Energy drawn since some fixed origin, in mJ (never decreases)."""
        ...


class NvmlMeter:
    """The counter of the NVML device behind one CUDA device (matched by UUID, which stays right
    under ``CUDA_VISIBLE_DEVICES``; NVML's own indices ignore it)."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def millijoules(self) -> float:
        import pynvml

        return float(pynvml.nvmlDeviceGetTotalEnergyConsumption(self._handle))


_METERS: dict[int, tuple[EnergyMeter | None, str]] = {}


def open_meter(cuda_device: int) -> tuple[EnergyMeter | None, str]:
    """The energy meter of a CUDA device, or None and why there is none (found once per
    process: the judge times many candidates)."""
    if cuda_device not in _METERS:
        _METERS[cuda_device] = _open_meter(cuda_device)
    return _METERS[cuda_device]


def _open_meter(cuda_device: int) -> tuple[EnergyMeter | None, str]:
    try:
        import pynvml
    except ImportError:
        return None, "no NVML bindings (pip install 'kernelwright[energy]')"
    try:
        import torch

        pynvml.nvmlInit()
        uuid = str(torch.cuda.get_device_properties(cuda_device).uuid)
        name = uuid if uuid.startswith(("GPU-", "MIG-")) else f"GPU-{uuid}"
        handle = pynvml.nvmlDeviceGetHandleByUUID(name)
        meter = NvmlMeter(handle)
        meter.millijoules()  # a GPU older than Volta, or a driver without it, raises here
    except Exception as exc:  # NVML's errors are many classes; any of them means no meter
        return None, f"NVML has no energy counter for this GPU ({type(exc).__name__}: {exc})"[:200]
    return meter, ""


def unavailable_reason(device: str) -> str:
    """Empty when ``device`` can be metered from this process; else why not (one line). Asked
    before a run that optimises energy, so a run that cannot measure it never starts."""
    if device != "cuda":
        return "energy is measured with a GPU's energy counter; the CPU has none"
    try:
        import pynvml
    except ImportError:
        return "no NVML bindings: pip install 'kernelwright[energy]' (nvidia-ml-py)"
    try:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    except Exception as exc:
        return f"NVML reports no energy counter on this GPU ({type(exc).__name__})"
    return ""


@dataclass(slots=True)
class EnergyWindows:
    """The judge's windows over the timed batches: each one's energy (mJ) and length (ms)."""

    meter: EnergyMeter
    windows: list[tuple[float, float]] = field(default_factory=list)

    def add(self, before_mj: float, after_mj: float, window_ms: float) -> None:
        # a counter that went back (a driver reset) adds nothing rather than subtracting
        self.windows.append((max(0.0, after_mj - before_mj), max(0.0, window_ms)))

    @property
    def millijoules(self) -> float:
        return sum(e for e, _ in self.windows)

    @property
    def window_ms(self) -> float:
        return sum(w for _, w in self.windows)

    def summary(self, call_ms: float) -> dict[str, Any] | None:
        """The verdict's energy record for calls of median ``call_ms`` (None: nothing measured,
        or windows whose counter never stepped: a GPU never draws 0 W, so a sum of 0 says the
        windows were too short to see a step, not that the calls were free).

        ``watts_se`` is the standard error of the mean power, as a ratio estimator over the
        windows: the counter's steps make single windows coarse (many see no step at all), and
        the spread between them is what says how far the sum can be trusted.
        """
        total_ms = self.window_ms
        if not self.windows or total_ms <= 0 or self.millijoules <= 0:
            return None
        watts = self.millijoules / total_ms
        n = len(self.windows)
        spread = sum((e - watts * w) ** 2 for e, w in self.windows)
        se = math.sqrt(n / (n - 1) * spread) / total_ms if n > 1 else watts
        return {
            "mj_per_call": watts * call_ms,
            "watts": watts,
            "watts_se": se,
            "mj_per_call_se": se * call_ms,
            "window_ms": total_ms,
            "batches": n,
            "source": SOURCE,
        }


def cost(ms: float | None, mj: float | None, objective: Objective) -> float:
    """What ``objective`` ranks by (lower is better): ms, mJ or mJ x ms; infinity where the
    quantity it needs was not measured."""
    inf = float("inf")
    if objective is Objective.TIME:
        return ms if ms is not None else inf
    if mj is None:
        return inf
    if objective is Objective.ENERGY:
        return mj
    return mj * ms if ms is not None else inf
