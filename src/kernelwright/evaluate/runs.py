"""Shared by both workers: building models, running them, and normalising their outputs."""

from __future__ import annotations

from typing import Any

from kernelwright.evaluate.precision import prepare_model, to_device
from kernelwright.records import Precision


class OutputTypeError(Exception):
    """A forward returned something other than a tensor or a tuple/list of plain tensors."""


# Models with at least this many parameters and buffer elements are built on the device: the
# CPU takes seconds per billion values to draw their initial weights (minutes for a 2-billion
# parameter MLP, built once per trial, in the judge and in the candidate's process alike)
ON_DEVICE_ELEMENTS = 1 << 28


def build_model(cls: Any, init_inputs: list[Any], seed: int, device: str, prec: Precision,
                on_device: bool = False) -> Any:
    """Seed, construct and move a model exactly as KernelBench does (same seed, same weights).

    ``on_device``: construct it on ``device`` instead of the CPU (its weights are then drawn by
    the device's generator: every model of one evaluation must be built the same way, which the
    judge decides once for the task with :func:`builds_on_device`).
    """
    import torch

    torch.manual_seed(seed)
    if on_device:
        with torch.device(device):
            model = cls(*init_inputs)
    else:
        model = cls(*init_inputs)
    return prepare_model(model, device, prec)


def builds_on_device(cls: Any, init_inputs: list[Any], device: str) -> bool:
    """Whether models of ``cls`` are built on ``device`` (a GPU, and at least
    :data:`ON_DEVICE_ELEMENTS` parameter and buffer values, counted on the meta device, which
    allocates nothing). A model that cannot be built on the meta device is built on the CPU."""
    import torch

    if device != "cuda":
        return False
    try:
        with torch.device("meta"):
            model = cls(*init_inputs)
        values = [*model.parameters(), *model.buffers()]
        return bool(sum(v.numel() for v in values) >= ON_DEVICE_ELEMENTS)
    except Exception:  # any failure only means: build as KernelBench does
        return False


def as_output_list(out: Any, strict: bool) -> list[Any]:
    """Normalise a forward's result to a list of tensors.

    With ``strict`` (the candidate), each output must be exactly a ``torch.Tensor`` (or exactly an
    ``nn.Parameter``): no subclass (lazy tensors compute on access or when serialised), no lazily
    conjugated or negated view, dense strided memory.
    """
    import torch

    items = list(out) if isinstance(out, list | tuple) else [out]
    for i, item in enumerate(items):
        if not isinstance(item, torch.Tensor):
            raise OutputTypeError(f"output {i} is a {type(item).__name__}, not a torch.Tensor")
        if strict:
            if type(item) is not torch.Tensor and type(item) is not torch.nn.Parameter:
                raise OutputTypeError(
                    f"output {i} is a {type(item).__module__}.{type(item).__name__}, a tensor "
                    "subclass; outputs must be plain, materialised torch.Tensor objects"
                )
            if item.layout is not torch.strided:
                raise OutputTypeError(f"output {i} has layout {item.layout}; expected strided")
            if item.is_conj() or item.is_neg():
                raise OutputTypeError(f"output {i} is a lazy conjugate/negative view")
    return items


def outputs_to_cpu(outputs: list[Any]) -> list[Any]:
    """Detached CPU copies (the parent compares them)."""
    return [o.detach().to("cpu", copy=True) for o in outputs]


def clone_inputs(inputs: list[Any], device: str) -> list[Any]:
    """Fresh device copies of ``inputs`` (each model gets its own, so mutation is visible)."""
    import torch

    moved = to_device(inputs, device)
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in moved]


def all_finite(outputs: list[Any]) -> bool:
    """No NaN or Inf in any floating output."""
    import torch

    return all(
        bool(torch.isfinite(o).all()) for o in outputs if o.is_floating_point() and o.numel()
    )


def nbytes(values: list[Any]) -> int:
    """Bytes of the tensors in ``values`` (one count per distinct storage)."""
    import torch

    seen: set[tuple[int, int]] = set()
    total = 0
    for v in values:
        if isinstance(v, torch.Tensor) and v.numel():
            key = (v.untyped_storage().data_ptr(), v.device.index or 0)
            if key in seen:
                continue
            seen.add(key)
            total += v.numel() * v.element_size()
    return total
