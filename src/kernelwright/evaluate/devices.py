"""Which device an evaluation runs on, and the software there."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from kernelwright.errors import ConfigError

DEVICES = ("auto", "cuda", "cpu")


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when a GPU is visible, else ``cpu``; ``cuda`` without a GPU is an error.

    Checked without initialising CUDA in this (parent) process.
    """
    if device not in DEVICES:
        raise ConfigError(f"--device {device!r} is not one of {', '.join(DEVICES)}")
    if device == "cpu":
        return "cpu"
    available = cuda_available()
    if device == "cuda" and not available:
        raise ConfigError(
            "--device cuda was asked for but no CUDA device is visible; use --device cpu "
            "(Triton runs through its interpreter) or run on a machine with a GPU"
        )
    return "cuda" if available else "cpu"


def cuda_available() -> bool:
    """A CUDA device is visible (``torch.cuda.is_available`` does not create a context)."""
    import torch

    return bool(torch.cuda.is_available())


# Prints the visible GPUs' names, one a line, from a child process: CUDA is initialised there
# and never in the caller, whose own children are forked.
_NAME_GPUS = (
    "import torch\n"
    "for i in range(torch.cuda.device_count()): print(torch.cuda.get_device_name(i))\n"
)


def gpu_models() -> tuple[str, ...]:
    """The model names of the visible GPUs, sorted and without repeats (``("NVIDIA H100 80GB
    HBM3",)``), found in a child process so that CUDA stays uninitialised here; () when there
    is none or the child fails (a second or two on a GPU machine, once per run)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _NAME_GPUS], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    if done.returncode != 0:
        return ()
    return tuple(sorted({line.strip() for line in done.stdout.splitlines() if line.strip()}))


def device_info(device: str) -> dict[str, Any]:
    """Name and versions, as a plain dict (becomes :class:`~kernelwright.records.DeviceInfo`)."""
    import platform

    import torch

    try:
        import triton

        triton_version: str | None = triton.__version__
    except ImportError:
        triton_version = None
    if device == "cuda":
        name = torch.cuda.get_device_name()
        cuda = torch.version.cuda
    else:
        name = f"cpu {platform.machine()}"
        cuda = None
    return {
        "kind": device,
        "name": name,
        "torch": torch.__version__,
        "triton": triton_version,
        "cuda": cuda,
        "interpreter": device == "cpu",
    }
