"""The Python helpers GEMM wrappers call; the emitted file holds each once (by name)."""

from __future__ import annotations

PY_HELPERS = {
    "_dot_operands": '''def _dot_operands(lhs, rhs):
    """The operands as tl.dot takes them: as they are, except under Triton's CPU interpreter,
    which multiplies bf16 tiles as raw 16-bit integers (numpy has no bf16): there they are
    widened to fp32, which changes nothing (products of bf16 values are exact in fp32, and the
    accumulation is fp32 either way)."""
    import os

    if lhs.dtype == torch.bfloat16 and os.environ.get("TRITON_INTERPRET") == "1":
        return lhs.float(), rhs.float()
    return lhs, rhs''',
    "_dot_precision": '''def _dot_precision(t, fp32_math):
    """tl.dot's input precision for operands like t: fp32 ones keep fp32 accuracy (fp32_math:
    "tf32x3" or "ieee") unless TF32 is allowed for matrix products; 16-bit ones need none."""
    if t.dtype != torch.float32:
        return None
    return "tf32" if torch.backends.cuda.matmul.allow_tf32 else fp32_math''',
    "_k_major": '''def _k_major(lhs, rhs, min_reuse):
    """lhs ([batch x] M x K) and rhs ([batch x] K x N) with a unit stride along K: an operand
    stored otherwise is copied K-major where each of its elements serves at least min_reuse
    products (N for lhs, M for rhs); the others are returned as they are."""
    M, K, N = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
    if K > 1 and lhs.stride(-1) != 1 and N >= min_reuse:
        lhs = lhs.contiguous()
    if K > 1 and rhs.stride(-2) != 1 and M >= min_reuse:
        rhs = rhs.transpose(-1, -2).contiguous().transpose(-1, -2)
    return lhs, rhs''',
    "_k_padded": '''def _k_padded(lhs, rhs, min_reuse):
    """lhs ([batch x] M x K) and rhs ([batch x] K x N) with K a multiple of 16, where M and N
    are both at least min_reuse and K is not one: both copied K-major into buffers whose K is
    rounded up to the next multiple of 16, the added columns zeros (they add nothing to the
    product). Triton vectorizes a tile's loads only where its rows start 16 values apart and
    its K mask is constant over 16 values: with K = 3583 every load is scalar (H200, fp32
    4099 x 3583 @ 3583 x 2777 under 3xTF32: 4.9 ms, cuBLAS fp32 2.1). The copies move 8 bytes
    an element; each element serves at least min_reuse products."""
    M, K, N = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
    if K % 16 == 0 or min(M, N) < min_reuse:
        return lhs, rhs
    padded = (K + 15) // 16 * 16
    wide_lhs = torch.empty((*lhs.shape[:-1], padded), device=lhs.device, dtype=lhs.dtype)
    wide_lhs[..., :K] = lhs
    wide_lhs[..., K:] = 0
    wide_rhs = torch.empty((*rhs.shape[:-2], N, padded), device=rhs.device, dtype=rhs.dtype)
    wide_rhs[..., :K] = rhs.transpose(-1, -2)
    wide_rhs[..., K:] = 0
    return wide_lhs, wide_rhs.transpose(-1, -2)''',
    "_stages": '''def _stages(stages, block_m, block_n, block_k, lhs, rhs, out_bytes, smem):
    """The pipeline's depth: at most stages, within smem bytes of shared memory. Each stage
    holds a block of both operands ((block_m + block_n) x block_k values of lhs's dtype); the
    epilogue converts the block_m x block_n output tile (out_bytes a value) through shared
    memory; a 32-bit operand not stored K-major takes one more block, which Triton transposes
    it into for the tensor cores. At least one stage."""
    item = lhs.element_size()
    stage = (block_m + block_n) * block_k * item
    room = smem - block_m * block_n * out_bytes
    if item == 4 and (lhs.stride(-1) != 1 or rhs.stride(-2) != 1):
        room -= stage
    return max(1, min(stages, room // stage))''',
    "_sm_count": '''def _sm_count(t):
    """Programs that run at once: one per SM on a GPU (a few under the interpreter)."""
    if t.device.type == "cuda":
        return _cuda_device(t.device)[0]
    return 4''',
    "_cuda_device": '''_CUDA_DEVICES = {}


def _cuda_device(device):
    """(SMs, compute capability major) of a CUDA device, queried once a process: the query
    costs microseconds, which the wrapper of a sub-millisecond product would pay every call."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _CUDA_DEVICES:
        props = torch.cuda.get_device_properties(index)
        _CUDA_DEVICES[index] = (props.multi_processor_count, props.major)
    return _CUDA_DEVICES[index]''',
    "_tma_operand": '''def _tma_operand(t, block_rows, block_cols):
    """(descriptor, transposed) for tensor-memory-accelerator loads of t's [block_rows,
    block_cols] tiles, t being [batch x] rows x cols; the descriptor follows t's storage, so a
    transposed t (unit stride along rows) is described cols x rows. (None, False) where TMA
    cannot load t: it needs a Hopper GPU (or the interpreter), a unit stride along one of the
    two dims and 16-byte aligned addresses and other strides."""
    if t.device.type == "cuda" and _cuda_device(t.device)[1] < 9:
        return None, False
    rows, cols = t.shape[-2], t.shape[-1]
    if t.stride(-1) == 1:
        outer, shape, transposed = t.stride(-2), [rows, cols], False
        block = [block_rows, block_cols]
    elif t.stride(-2) == 1:
        outer, shape, transposed = t.stride(-1), [cols, rows], True
        block = [block_cols, block_rows]
    else:
        return None, False
    batch = t.shape[0] if t.dim() == 3 else 1
    batch_stride = t.stride(0) if t.dim() == 3 else outer * shape[0]
    aligned = [t.data_ptr(), outer * t.element_size(), batch_stride * t.element_size()]
    if any(v % 16 for v in aligned) or min(rows, cols, batch) == 0:
        return None, False
    if (outer == 0 and shape[0] > 1) or (batch_stride == 0 and batch > 1):
        return None, False  # rows or a batch broadcast by a zero stride
    desc = _descriptor(t, [batch, *shape], [batch_stride, outer, 1], [1, *block])
    return desc, transposed''',
}
