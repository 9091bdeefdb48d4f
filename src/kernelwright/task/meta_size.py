"""A task's call size counted on PyTorch's meta device: shapes and dtypes, no memory.

Cheaper than :mod:`kernelwright.task.estimate` (no forward, no flop counter, none of the
symbolic-shape machinery a meta forward imports): enough to tell, before anything is allocated,
whether a task is of a size a machine can run at all. It calls the task's own code, so it runs
only where the task was imported (a child process).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def meta_call_bytes(get_inputs: Callable[[], Any], model_cls: Any, init: Sequence[Any]) -> int:
    """Bytes of a call's inputs and of the model's parameters and buffers, each made on the
    meta device by the task's ``get_inputs`` and ``Model(*init)``; raises what they raise
    there."""
    import torch

    with torch.device("meta"):
        inputs = list(get_inputs())
        model = model_cls(*init)
    held = list(model.parameters()) + list(model.buffers())
    return sum(_nbytes(t) for t in [*inputs, *held])


def _nbytes(value: Any) -> int:
    import torch

    return value.numel() * value.element_size() if isinstance(value, torch.Tensor) else 0
