"""Which framework (ATen) operators a forward pass runs, counted by name.

Used twice: on the reference, to know which compute operators the task needs; on the
candidate, to see what it left to the framework. A candidate that runs every compute operator
of the reference through the framework is delegating the work, whatever kernels it also
launches; one that keeps only a vendor GEMM or convolution and does the rest in its own kernels
is a hybrid, accepted and labelled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

# Operators that move, view, allocate or convert, but compute nothing a kernel is judged on.
NON_COMPUTE = frozenset(
    [
        "alias",
        "as_strided",
        "as_strided_",
        "clone",
        "contiguous",
        "copy",
        "copy_",
        "detach",
        "detach_",
        "empty",
        "empty_like",
        "empty_strided",
        "expand",
        "expand_as",
        "fill",
        "fill_",
        "full",
        "full_like",
        "lift_fresh",
        "lift_fresh_copy",
        "new_empty",
        "new_empty_strided",
        "new_full",
        "new_ones",
        "new_zeros",
        "ones",
        "ones_like",
        "permute",
        "reshape",
        "select",
        "set_",
        "slice",
        "split",
        "split_with_sizes",
        "squeeze",
        "squeeze_",
        "t",
        "transpose",
        "unbind",
        "unflatten",
        "unsqueeze",
        "unsqueeze_",
        "view",
        "view_as",
        "zero_",
        "zeros",
        "zeros_like",
        "_to_copy",
        "_unsafe_view",
        "to",
        "item",
        "_local_scalar_dense",
        "resize_",
        "scalar_tensor",
        "arange",
        "_reshape_alias",
        "narrow",
        "flatten",
        "_has_compatible_shallow_copy_type",
        "is_same_size",
        "record_stream",
        "_efficientzerotensor",
    ]
)

# Vendor-library operators a hybrid may keep while fusing the rest into its own kernels.
VENDOR_OPS = frozenset(
    [
        "mm",
        "addmm",
        "bmm",
        "baddbmm",
        "matmul",
        "linear",
        "convolution",
        "_convolution",
        "cudnn_convolution",
        "convolution_overrideable",
        "mkldnn_convolution",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
        "conv1d",
        "conv2d",
        "conv3d",
        "addbmm",
        "_scaled_mm",
    ]
)


def op_name(func: Any) -> str:
    """``aten.addmm.default`` -> ``addmm``."""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or str(func)
    return str(name).split(".")[-1]


def compute_ops(counts: Counter[str]) -> Counter[str]:
    """The compute operators among ``counts``."""
    return Counter({k: v for k, v in counts.items() if k not in NON_COMPUTE})


def record_ops(fn: Callable[..., Any], *args: Any) -> tuple[Any, Counter[str], int, Counter[str]]:
    """Call ``fn(*args)``; count the ATen operators it dispatches, their matrix FLOPs and the
    elements each operator produced.

    FLOPs come from PyTorch's flop-counter formulas (GEMM, convolution, attention), applied in
    this one dispatch pass (``FlopCounterMode`` itself would import TorchDynamo, seconds of
    start-up in every judge).
    """
    import torch
    from torch.utils.flop_counter import flop_registry

    from kernelwright.evaluate.dispatch_mode import mode_base

    counts: Counter[str] = Counter()
    numels: Counter[str] = Counter()
    flops = [0]

    class _Recorder(mode_base()):  # type: ignore[misc]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            kwargs = kwargs or {}
            name = op_name(func)
            counts[name] += 1
            out = func(*args, **kwargs)
            for o in out if isinstance(out, list | tuple) else [out]:
                if isinstance(o, torch.Tensor):
                    numels[name] += o.numel()
            formula = flop_registry.get(func.overloadpacket)
            if formula is not None:
                work = formula(*args, **kwargs, out_val=out) * causal_fraction(func, args, kwargs)
                flops[0] += int(work)
            return out

    with _Recorder():
        out = fn(*args)
    return out, counts, flops[0], numels


def causal_fraction(func: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> float:
    """The fraction of an attention's scores a causal mask leaves (1.0 for anything else):
    PyTorch's flop formulas count every query against every key, but a causal kernel skips the
    keys after each query (``is_causal``: query i sees keys 0..i), so a floor from the full
    count is twice the true one and fractions of it pass 100%."""
    schema = getattr(func, "_schema", None)
    if schema is None:
        return 1.0
    names = [a.name for a in schema.arguments]
    if "is_causal" not in names:
        return 1.0
    at = names.index("is_causal")
    causal = kwargs.get("is_causal", args[at] if at < len(args) else False)
    if not causal or len(args) < 2:
        return 1.0
    sq, sk = int(args[0].shape[-2]), int(args[1].shape[-2])
    if sq == 0 or sk == 0:
        return 1.0
    seen = sq * (sq + 1) // 2 if sq <= sk else sk * (sk + 1) // 2 + (sq - sk) * sk
    return seen / (sq * sk)
