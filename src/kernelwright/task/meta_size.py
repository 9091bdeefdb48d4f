"""A task's call size counted on PyTorch's meta device: shapes and dtypes, no memory.

Cheaper than :mod:`kernelwright.task.estimate` (no forward, no flop counter, none of the
symbolic-shape machinery a meta forward imports): enough to tell, before anything is allocated,
whether a task is of a size a machine can run at all. Runs only in child processes (it imports
the task).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernelwright.task.module import import_task_module


def meta_call_bytes(path: str | Path, size: str) -> int:
    """Bytes of one call's inputs and of the model's parameters and buffers at ``size``, each
    made on the meta device; raises what the task's own code raises there."""
    import torch

    module = import_task_module(path, size)
    init = list(getattr(module, "get_init_inputs", list)())
    with torch.device("meta"):
        inputs = list(module.get_inputs())
        model = module.Model(*init)
    held = list(model.parameters()) + list(model.buffers())
    return sum(_nbytes(t) for t in [*inputs, *held])


def _nbytes(value: Any) -> int:
    import torch

    return value.numel() * value.element_size() if isinstance(value, torch.Tensor) else 0
