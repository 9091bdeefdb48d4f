"""The lines every attention wrapper starts with, whatever its kernels: the operands and their
sizes checked, the output allocated, the softmax's scale and the grouped-query heads, the mask
broadcast, every operand's strides."""

from __future__ import annotations

from kernelwright.design.families.attention.kernels import (
    LOG2E,
    MASK_ADD,
    MASK_BOOL,
    MASK_NONE,
    STRIDES,
)
from kernelwright.design.families.attention.spec import AttentionSpec
from kernelwright.design.kernel.common import Code
from kernelwright.design.kernel.emitter import safe_name


def operands(code: Code, spec: AttentionSpec, out: str) -> None:
    """q, k, v (and the mask) by name, their sizes checked, ``out`` allocated."""
    names = [safe_name(x) for x in (spec.q, spec.k, spec.v)]
    code.add(f"q, k, v = {', '.join(names)}  # (B, H, M, D), (B, Hk, N, D), (B, Hk, N, Dv)")
    if spec.mask is not None:
        code.add(f"mask = {safe_name(spec.mask)}  # broadcasts to (B, H, M, N)")
    code.add(
        "B, H, M, D = q.shape",
        "Hk, N, DV = k.shape[1], k.shape[2], v.shape[3]",
        "if k.shape[0] != B or k.shape[3] != D or tuple(v.shape[:3]) != (B, Hk, N) or H % Hk:",
        '    raise RuntimeError(f"attention over {tuple(q.shape)}, {tuple(k.shape)}, "',
        '                       f"{tuple(v.shape)}")',
        f"{out} = torch.empty((B, H, M, DV), device=q.device, dtype=q.dtype)",
    )


def heads(code: Code, spec: AttentionSpec) -> None:
    """The scale folded with log2(e), and the query heads per key/value head."""
    scale = repr(spec.scale) if spec.scale is not None else "D ** -0.5"
    code.add(
        f"qk_scale = {scale} * {LOG2E}  # the softmax runs in the log2 domain (exp2)",
        "kv_group = H // Hk  # query heads per key/value head (grouped-query attention)",
        "n_heads = H",
    )


def mask_and_strides(code: Code, spec: AttentionSpec, out: str) -> None:
    """MASK (what the mask operand is), the mask broadcast to (B, H, M, N), every stride."""
    if spec.mask is not None:
        code.add(
            "# the mask broadcast to (B, H, M, N): its broadcast dimensions get a zero stride",
            "mask = mask.expand(B, H, M, N)",
            f"MASK = {MASK_BOOL} if mask.dtype == torch.bool else {MASK_ADD}",
        )
    else:
        code.add(f"MASK = {MASK_NONE}")
    for t, dims in STRIDES.items():
        if t == "mask" and spec.mask is None:
            continue
        tensor = out if t == "out" else t
        code.add(
            f"stride_{t}{dims[0]}, stride_{t}{dims[1]}, stride_{t}{dims[2]}, "
            f"stride_{t}{dims[3]} = {tensor}.stride()"
        )
