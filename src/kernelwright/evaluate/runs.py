"""Shared by both workers: building models, running them, and normalising their outputs."""

from __future__ import annotations

from typing import Any

from kernelwright.evaluate.precision import prepare_model, to_device
from kernelwright.records import Precision


class OutputTypeError(Exception):
    """A forward returned something other than a tensor or a tuple/list of plain tensors."""


def build_model(cls: Any, init_inputs: list[Any], seed: int, device: str, prec: Precision) -> Any:
    """Seed, construct and move a model exactly as KernelBench does (same seed, same weights)."""
    import torch

    torch.manual_seed(seed)
    model = cls(*init_inputs)
    return prepare_model(model, device, prec)


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
