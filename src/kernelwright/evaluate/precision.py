"""Precision policies, applied the same way to the reference, both baselines and the candidate."""

from __future__ import annotations

from typing import Any

from kernelwright.records import Precision


def apply_policy(precision: Precision) -> None:
    """Set the process-wide matmul flags of a policy. Call once, at the start of a child."""
    import torch

    tf32 = precision is Precision.TF32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")


def policy_flags() -> dict[str, Any]:
    """The flags a policy sets, read back (the guard compares them before and after a candidate)."""
    import torch

    return {
        "cuda.matmul.allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "cudnn.allow_tf32": bool(torch.backends.cudnn.allow_tf32),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
    }


def run_dtype(precision: Precision) -> Any:
    """The dtype floating inputs and weights are cast to under a policy."""
    import torch

    return torch.bfloat16 if precision is Precision.BF16 else torch.float32


def cast_value(value: Any, precision: Precision) -> Any:
    """Cast floating tensors to the run dtype; integers, booleans and non-tensors are untouched.

    KernelBench casts every input, which turns integer class labels into floats; only floating
    tensors change here.
    """
    import torch

    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.to(run_dtype(precision))
    if isinstance(value, list | tuple):
        return type(value)(cast_value(v, precision) for v in value)
    return value


def to_device(value: Any, device: str) -> Any:
    """Move tensors (inside lists and tuples too) to ``device``."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, list | tuple):
        return type(value)(to_device(v, device) for v in value)
    return value


def prepare_model(model: Any, device: str, precision: Precision) -> Any:
    """Move a freshly built module to the device and the policy's dtype (floating params only)."""
    model = model.to(device)
    if precision is Precision.BF16:
        model = model.to(run_dtype(precision))
    return model.eval() if hasattr(model, "eval") else model
