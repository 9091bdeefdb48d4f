"""Full-size work of a task, counted without allocating it: bytes, FLOPs, a floor, an estimate.

The model and inputs are built on PyTorch's ``meta`` device (shapes and dtypes, no memory), so
the full size of any task is safe to inspect on a small CPU machine:

    bytes       inputs + outputs + parameters and buffers, each counted once (the harness's count)
    GFLOP       PyTorch's flop counter (matrix products, convolutions, attention)
    floor ms    max(bytes / COPY_GBPS, FLOPs / FP32_TFLOPS): the fp32 speed of light on an H200
    eager ms    a model of eager PyTorch: every dispatched operator is its own kernel that reads
                its inputs and writes its outputs at EAGER_GBPS, or runs its FLOPs at the
                operator's eager matrix rate, whichever is slower, and costs at least LAUNCH_MS.
                An estimate to size tasks with, not a measurement (``kernelwright bench
                baselines`` measures).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode, flop_registry

from kernelwright.task.module import import_task_module

# H200 figures (measured by the harness's ceilings; BENCHMARKS.md) and the eager model's guesses.
COPY_GBPS = 4300.0  # device-to-device copy, bytes read + written
FP32_TFLOPS = 50.0  # fp32 matrix product without TF32
EAGER_GBPS = 0.75 * COPY_GBPS  # a streaming eager kernel; strided/scan/sort kernels do worse
EAGER_TFLOPS = {"matmul": 50.0, "conv": 35.0, "attention": 25.0}
LAUNCH_MS = 0.003  # smallest GPU time of one eager kernel

_NO_KERNEL = {"empty", "empty_like", "empty_strided", "detach", "lift_fresh", "alias"}


@dataclass(frozen=True)
class Estimate:
    """Full-size work of one task, counted on the meta device."""

    bytes: int
    flops: int
    floor_ms: float
    eager_ms: float
    kernels: int
    inputs: tuple[str, ...] = ()  # "4096x32768", "262144 int64": the full-size inputs


class _EagerModel(TorchDispatchMode):
    """Times each dispatched operator as one eager kernel (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.ms = 0.0
        self.kernels = 0
        self.paused = 0

    def add(self, nbytes: int, flops: float, tflops: float) -> None:
        self.ms += max(nbytes / (EAGER_GBPS * 1e9) * 1e3, flops / (tflops * 1e12) * 1e3, LAUNCH_MS)
        self.kernels += 1

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if self.paused or func.is_view or name in _NO_KERNEL:
            return out
        touched = [t for t in tree_leaves((args, kwargs, out)) if isinstance(t, torch.Tensor)]
        flops = 0.0
        if func.overloadpacket in flop_registry:
            flops = float(flop_registry[func.overloadpacket](*args, **kwargs, out_val=out))
        rate = EAGER_TFLOPS["conv" if "conv" in name else "matmul"]
        self.add(sum(_distinct_bytes(t) for t in touched), flops, rate)
        return out


class _FusedAttention(TorchFunctionMode):
    """Counts ``F.scaled_dot_product_attention`` as the one fused kernel it is on a GPU.

    On the meta device it decomposes into matmuls and a softmax over the full score matrix,
    which eager CUDA (the memory-efficient kernel for fp32) never writes to memory.
    """

    def __init__(self, eager: _EagerModel) -> None:
        super().__init__()
        self.eager = eager

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func is not F.scaled_dot_product_attention:
            return func(*args, **kwargs)
        self.eager.paused += 1
        try:
            out = func(*args, **kwargs)
        finally:
            self.eager.paused -= 1
        q, k = args[0], args[1]
        flops = 4.0 * q.numel() * k.shape[-2]  # QK^T and PV: 2 * 2 * (B*H*Sq*D) * Sk
        if kwargs.get("is_causal") or (len(args) > 5 and args[5]):
            flops /= 2
        touched = [t for t in tree_leaves((args, kwargs, out)) if isinstance(t, torch.Tensor)]
        self.eager.add(sum(_distinct_bytes(t) for t in touched), flops, EAGER_TFLOPS["attention"])
        return out


def _distinct_bytes(t: torch.Tensor) -> int:
    """Bytes of the distinct elements a tensor view covers (a broadcast dimension counts once)."""
    n = math.prod(s for s, st in zip(t.shape, t.stride(), strict=True) if st != 0)
    return int(n * t.element_size())


def _nbytes(values: Any) -> int:
    return sum(
        t.numel() * t.element_size() for t in tree_leaves(values) if isinstance(t, torch.Tensor)
    )


def estimate(path: Path, size: str = "full") -> Estimate:
    """Bytes, FLOPs and time estimates of one task at ``size``, without allocating memory.

    The model and inputs are made under ``torch.device("meta")``; the forward runs outside that
    context, so a tensor the forward creates without ``device=`` lands on the CPU and the run
    fails, as it would on a GPU.
    """
    module = import_task_module(path, size=size)
    with torch.device("meta"):
        model = module.Model(*getattr(module, "get_init_inputs", list)()).eval()
        inputs = list(module.get_inputs())
    with torch.no_grad():
        counter = FlopCounterMode(display=False)
        with counter:
            outputs = model(*inputs)
        eager = _EagerModel()
        with _FusedAttention(eager), eager:
            model(*inputs)
    state = list(model.parameters()) + list(model.buffers())
    nbytes = _nbytes(inputs) + _nbytes(outputs) + _nbytes(state)
    flops = int(counter.get_total_flops())
    floor_ms = max(nbytes / (COPY_GBPS * 1e9), flops / (FP32_TFLOPS * 1e12)) * 1e3
    shapes = tuple(_shape(t) for t in inputs if isinstance(t, torch.Tensor))
    return Estimate(nbytes, flops, floor_ms, eager.ms, eager.kernels, shapes)


def _shape(t: torch.Tensor) -> str:
    dims = "x".join(str(d) for d in t.shape) or "scalar"
    return dims if t.dtype == torch.float32 else f"{dims} {str(t.dtype).replace('torch.', '')}"


def variant_bytes(path: Path, size: str = "full") -> list[int]:
    """Input + output bytes of each input variant at ``size`` (meta device, nothing allocated)."""
    module = import_task_module(path, size=size)
    variants = getattr(module, "get_input_variants", None)
    if variants is None:
        return []
    with torch.device("meta"):
        model = module.Model(*getattr(module, "get_init_inputs", list)()).eval()
        sets = [list(v) for v in variants()]
    with torch.no_grad():
        return [_nbytes(inputs) + _nbytes(model(*inputs)) for inputs in sets]
