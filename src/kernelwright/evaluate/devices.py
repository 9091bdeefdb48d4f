"""Which device an evaluation runs on, and the software there."""

from __future__ import annotations

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
