"""Default parameters of the convolution skills, for Hopper (H100/H200).

The implicit GEMM takes the GEMM family's tile (128 x 128 output tiles in 8 warps, grouped
order over 8 row blocks) with 3 pipeline stages, on channels-last copies of its operands
(``CHANNELS_LAST`` 1: each step loads one tap's channels as contiguous K-major rows), K blocks
of 32 fp32 or 64 16-bit values (128 bytes a row either way; 64 fp32 values with TMA loads where
that keeps as many blocks on an SM), or a tap's channels rounded up to a power of two where
there are fewer, or gathering NCHW patches where the copy would move
about as many values as the product reads. Tiles shrink to the product's size. The direct kernel
takes 128 positions x 16 channels (64 for one group). The sweeps behind them:
``conv/sweeps/implicit_layout.csv``, ``conv/sweeps/vendor_epilogue.csv``."""

from __future__ import annotations

from kernelwright.design.families.base import sixteen_bit, vendor_tensor_cores
from kernelwright.design.families.conv.spec import block_diagonal
from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.heuristics import heuristic, next_pow2

STAGES = 3


@heuristic("conv_implicit_gemm")
def conv_implicit_gemm(f: GroupFacts) -> dict[str, int]:
    """128 x 128 tiles, 3 stages, 8 warps, 3xTF32 for fp32 operands, on channels-last copies;
    K blocks of 32 fp32 or 64 16-bit values, at most a tap's channels rounded up to a power of
    two (at least 16).

    Why channels-last: on an H200 (``sweeps/implicit_layout.csv``: KernelBench level-2 tasks 1
    and 54, 3 x 3 filters, 64 -> 128 and 64 -> 64 channels) the NHWC kernel ran 4.81 and
    7.01 ms under fp32 where the NCHW gathers ran 6.87 and 9.97, the copy of the input
    included; 3-D convolutions have only this layout. Why 64 16-bit values: under bf16 the
    same tasks ran 1.00 and 1.76 ms against 1.12 and 2.01 with blocks of 32 (4 stages of 64
    lost: 1.34 and 1.91).

    Except where the copy would move about as many values as the product's patches hold
    (three quarters or more: a convolution strided by about its taps, or a 1 x 1 one): there
    the NCHW gathers (``CHANNELS_LAST`` 0). On an H100 under fp32
    (``sweeps/implicit_layout.csv``), KernelBench level-1 76 (1-D, 3 taps, stride 3: as many
    input values as patch values) ran 11.23 ms gathering against 15.62 with the copy, which
    alone took 6.2 of them; level-1 67 (1-D, 3 taps, stride 1: a third) 4.46 against 4.33;
    level-1 87 (1 x 1, 64 -> 128 channels) 7.67 against 11.64, and the suite's level-2 12
    (1 x 1 after a pool) 0.73 against 0.83.

    With ``TMA`` 1 a 2-D convolution of stride 1 on channels-last operands loads its blocks
    as boxes (``implicit_gemm_tma_kernel``; elsewhere the flag is ignored). On an H100
    (``sweeps/implicit_tma.csv``: KernelBench level-2 1, 4 and 54 and held-out 33, 3 x 3,
    48-64 -> 64-128 channels) 128-position tiles with TMA ran 17-35% faster than pointer
    loads under bf16 and 7-29% faster under fp32 on the first three; held-out 33's 192-wide
    images in 128-wide tiles ran 18% slower under fp32, a third of its tiles' positions past
    the edge, hence tiles shaped to the image (``_tma_tile``). With TMA, 64-position tiles lost
    on every task, and 4 stages on all but fp32 task 1 (1% faster there)."""
    g = f.gemm
    assert g is not None
    patches = g.m * g.k * g.groups
    copy_dominates = g.spatial == 2 and 4 * g.input_elements >= 3 * patches > 0
    block_m = max(16, min(128, next_pow2(g.m)))
    block_n = max(16, min(128, next_pow2(g.n)))
    tma = g.spatial == 2 and not copy_dominates  # the kernel loads by TMA at stride 1 only
    boxes = tma and not g.strided and not g.transposed
    widest = 64 if sixteen_bit(f) or (boxes and wide_steps_keep_residency(block_m, block_n)) \
        else 32
    # a channels-last step reads one tap's channels: a block wider than them multiplies zeros
    # (8 channels in blocks of 32 waste three quarters of the products, in blocks of 16 half)
    depth = min(widest, next_pow2(g.k), next_pow2(g.channels or g.k))
    return {
        "BLOCK_M": block_m,
        "BLOCK_N": block_n,
        "BLOCK_K": max(16, depth),
        "GROUP_M": 8,
        "STAGES": STAGES,
        "WARPS": 8 if block_m * block_n >= 128 * 64 else 4,
        "FP32_MATH": 0,
        "CHANNELS_LAST": 0 if copy_dominates else 1,
        "TMA": int(tma),
    }


# Hopper's shared memory: an SM's, and what one block may take less the kilobyte the pipeline's
# barriers keep (the figure the generated wrappers fit their stages in)
SM_SHARED_BYTES = 228 * 1024
BLOCK_SHARED_BYTES = 227 * 1024 - 1024


def resident_blocks(block_m: int, block_n: int, block_k: int, item: int = 4,
                    out_bytes: int = 4) -> int:
    """Blocks of an implicit GEMM an SM holds at once by shared memory: each takes its
    pipeline's stages (at most ``STAGES`` of (block_m + block_n) x block_k operand values, as
    many as fit beside the epilogue's tile, as the wrapper counts them) and the block_m x
    block_n output tile it converts through shared memory."""
    tile = block_m * block_n * out_bytes
    stage = (block_m + block_n) * block_k * item
    stages = min(STAGES, (BLOCK_SHARED_BYTES - tile) // stage)
    if stages < 1:
        return 0
    return SM_SHARED_BYTES // (stages * stage + tile + 1024)


def wide_steps_keep_residency(block_m: int, block_n: int) -> bool:
    """fp32 operands loaded by TMA step through K in blocks of 64 values (256 bytes a row)
    where an SM holds as many blocks as with 32: half the steps, so half the barrier waits
    and loop overhead between the tensor cores' products. Where the wider stages would evict a
    resident block, 32: the other block's loads hide more latency than fewer steps save.

    On an H100 under fp32 (``sweeps/implicit_tma.csv``, rows of ``493c3b5``), 128 x 128 tiles
    (one block an SM either way, 2 stages of 64 against 3 of 32) ran 3.96 against 4.41 ms on
    KernelBench level-2 1, 8.89 against 9.60 on 4 and 2.375 against 2.416 on held-out 33;
    128 x 64 tiles (two blocks an SM with 32, one with 64) ran 5.48 against 4.96 on 54. The
    tuner's moves on an H200 agree (4: 9.08 against 9.96, 33: 2.415 against 2.574). Compiled
    for sm_90, task 1's kernel at 64 holds 140 registers a thread (8 warps: one block an SM by
    registers too) in 128 KB of shared memory, task 54's at 32 holds 78 registers in 72 KB
    (the model here, which counts the epilogue's tile beside the stages as the wrapper does,
    says two blocks; the compiled kernel reuses the stages for it and fits three)."""
    narrow = resident_blocks(block_m, block_n, 32)
    return narrow > 0 and resident_blocks(block_m, block_n, 64) >= narrow


@heuristic("conv_transposed_implicit_gemm")
def conv_transposed_implicit_gemm(f: GroupFacts) -> dict[str, int]:
    """The implicit GEMM's tiles (each phase is one, on channels-last copies, with the same
    loads): on an H200 under fp32 it ran 1.4-3.9x torch.compile at these defaults on five
    transposed tasks (BENCHMARKS.md); 64-row tiles ran 46-85% slower on four of them and 5%
    faster on the fifth. Grouped, a tile spans at most one group's channels, unless the groups
    run as one block-diagonal product."""
    params = conv_implicit_gemm(f)
    del params["CHANNELS_LAST"], params["TMA"]
    g = f.gemm
    assert g is not None
    if g.groups > 1 and not block_diagonal(g.groups, g.n // g.groups):
        # a tile's columns lie in one group: BLOCK_N divides its channels
        opg = g.n // g.groups
        params["BLOCK_N"] = max(16, min(params["BLOCK_N"], opg & -opg))
        params["WARPS"] = 8 if params["BLOCK_M"] * params["BLOCK_N"] >= 128 * 64 else 4
    return params


@heuristic("conv_vendor")
def conv_vendor(f: GroupFacts) -> dict[str, int]:
    """The epilogue kernel's tile: 32 positions x 128 channels in 4 warps where the
    convolution's output is NCHW; 128 positions x 64 channels in 8 warps where cuDNN multiplies
    on tensor cores (16-bit operands, or TF32 allowed) and so runs channels-last
    (``CHANNELS_LAST`` 1; the wrapper checks the runtime dtype and flag, which the policy
    sets), the epilogue reading NHWC and writing NCHW. Either way 32 values a thread.

    Why channels-last: on an H200 (128 x 64 -> 128 channels, 3 x 3, 128 x 128 pixels) cuDNN's
    NCHW convolution took 3.1x torch.compile's time under bf16 and 2.3x under tf32,
    torch.compile converting such convolutions to channels-last; channels-last brought the
    bf16 task from 3.07 to 1.46 ms (128 x 32 tiles). Why 32 x 128 on NCHW outputs: compiled
    for sm_90, 128 positions x 32 channels load the per-channel operands once per element
    (64-68 loads a thread), 32 x 128 once a thread (2). Why 128 x 64 where the epilogue
    transposes: its NCHW stores run along positions, 64 bytes a channel row at 32 bf16
    positions; on an H100 under bf16 (``sweeps/vendor_epilogue.csv``, `do_bench`, the whole
    call) the 128 x 64 tile in 8 warps ran 15%, 8% and 3% faster on KernelBench level-2 tasks
    1, 4 and 54 and 7-10% under tf32 (1, 54), within 1% on five other convolutions, 2% slower
    on one (level-2 3-D, 0.261 against 0.256 ms). Tiles of 64 values a thread (128 x 128 in 8
    warps) ran 21% slower on task 93 (GELU: 151 registers a thread, one block an SM)."""
    g = f.gemm
    assert g is not None
    if vendor_tensor_cores(f):
        block_m = max(16, min(128, next_pow2(g.m)))
        block_n = max(16, min(64, next_pow2(g.n)))
        warps = 8 if block_m * block_n >= 128 * 64 else 4
    else:
        block_m = max(16, min(32, next_pow2(g.m)))
        block_n = max(16, min(128, next_pow2(g.n)))
        warps = 4
    return {
        "BLOCK_M": block_m,
        "BLOCK_N": block_n,
        "GROUP_M": 1,
        "WARPS": warps,
        "CHANNELS_LAST": 1,
    }


@heuristic("conv_direct")
def conv_direct(f: GroupFacts) -> dict[str, int]:
    """128 positions (contiguous along ow) x 16 channels in 4 warps: 16 fp32 accumulators a
    thread, and each tap a coalesced column of positions. One group: up to 64 channels, since
    every channel of the tile shares a tap's column of input values (more products a load;
    64 accumulators a thread)."""
    g = f.gemm
    assert g is not None
    return {
        "BLOCK_M": max(16, min(128, next_pow2(g.m))),
        "BLOCK_N": max(16, min(64, next_pow2(g.n))) if g.groups == 1 else 16,
        "GROUP_M": 1,
        "WARPS": 4,
    }
