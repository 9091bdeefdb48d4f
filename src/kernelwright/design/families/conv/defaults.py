"""Default parameters of the convolution skills, for Hopper (H100/H200).

The implicit GEMM takes the GEMM family's tile (128 x 128 output tiles in 8 warps, K blocks of
32 taps, grouped order over 8 row blocks) with 3 pipeline stages: the patch gathers are pointer
loads, whose addresses take registers per stage, and an fp32 patch block gathered M-major takes
one more block of shared memory for its transpose (``_conv_stages``); channels-last copies
(``CHANNELS_LAST`` 1) load K-major rows instead. Tiles shrink to the product's size. The
direct kernel (grouped convolutions) takes 128 positions x 16 channels. Not yet measured on a
GPU: the tuner's space is the skill file's."""

from __future__ import annotations

from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2

STAGES = 3


def vendor_tensor_cores(f: GroupFacts) -> bool:
    """cuDNN multiplies this group's convolution on tensor cores itself: 16-bit operands, or
    the tf32 policy (fp32 operands with TF32 allowed)."""
    floats = [d for d in f.dtypes if d.startswith(("float", "bfloat"))]
    half = bool(floats) and all(d in ("float16", "bfloat16") for d in floats)
    return half or f.precision == "tf32"


@heuristic("conv_implicit_gemm")
def conv_implicit_gemm(f: GroupFacts) -> dict[str, int]:
    """128 x 128 x 32 tiles, 3 stages, 8 warps, 3xTF32 for fp32 operands. The input as given
    (NCHW) under fp32, the layout these defaults were measured in; channels-last where cuDNN
    multiplies on tensor cores itself (16-bit operands, or tf32): there the NCHW gathers lost
    to cuDNN (``TENSOR_CORE_IMPLICIT``), and the vendor path, which ranks first, copies the
    input channels-last as well; and for 3-D convolutions, which only the channels-last kernel
    takes."""
    g = f.gemm
    assert g is not None
    block_m = max(16, min(128, next_pow2(g.m)))
    block_n = max(16, min(128, next_pow2(g.n)))
    return {
        "BLOCK_M": block_m,
        "BLOCK_N": block_n,
        "BLOCK_K": max(16, min(32, next_pow2(g.k))),
        "GROUP_M": 8,
        "STAGES": STAGES,
        "WARPS": 8 if block_m * block_n >= 128 * 64 else 4,
        "FP32_MATH": 0,
        "CHANNELS_LAST": int(vendor_tensor_cores(f) or g.spatial == 3),
    }


@heuristic("conv_transposed_implicit_gemm")
def conv_transposed_implicit_gemm(f: GroupFacts) -> dict[str, int]:
    """The implicit GEMM's tiles (each phase is one, on channels-last copies); not yet timed."""
    params = conv_implicit_gemm(f)
    del params["CHANNELS_LAST"]
    return params


@heuristic("conv_vendor")
def conv_vendor(f: GroupFacts) -> dict[str, int]:
    """The epilogue kernel's tile: 32 positions x 128 channels, 4 warps. Where cuDNN multiplies
    on tensor cores (16-bit operands, or TF32 allowed) the convolution runs channels-last
    (``CHANNELS_LAST`` 1; the wrapper checks the runtime dtype and flag, which the policy
    sets).

    Why channels-last: on an H200 (128 x 64 -> 128 channels, 3 x 3, 128 x 128 pixels) cuDNN's
    NCHW convolution took 3.1x torch.compile's time under bf16 and 2.3x under tf32,
    torch.compile converting such convolutions to channels-last; channels-last brought the
    bf16 task from 3.07 to 1.46 ms (128 x 32 tiles). Why this tile: compiled for sm_90 (that
    task, fp32 and bf16, NCHW and NHWC output), 128 positions x 32 channels load the
    per-channel operands once per element (64-68 loads a thread), 32 x 128 once a thread (2),
    with the output's reads in vectors either way. Not yet timed on a GPU."""
    g = f.gemm
    assert g is not None
    return {
        "BLOCK_M": max(16, min(32, next_pow2(g.m))),
        "BLOCK_N": max(16, min(128, next_pow2(g.n))),
        "GROUP_M": 1,
        "WARPS": 4,
        "CHANNELS_LAST": 1,
    }


@heuristic("conv_direct")
def conv_direct(f: GroupFacts) -> dict[str, int]:
    """128 positions (contiguous along ow) x 16 channels in 4 warps: 16 fp32 accumulators a
    thread, and each tap a coalesced column of positions."""
    g = f.gemm
    assert g is not None
    return {
        "BLOCK_M": max(16, min(128, next_pow2(g.m))),
        "BLOCK_N": 16,
        "GROUP_M": 1,
        "WARPS": 4,
    }
