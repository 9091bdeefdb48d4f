"""The Python helpers convolution wrappers call; the emitted file holds each once (by name)."""

from __future__ import annotations

from kernelwright.design.families.gemm.helpers import PY_HELPERS as GEMM_HELPERS

PY_HELPERS = {
    "_dot_operands": GEMM_HELPERS["_dot_operands"],
    "_conv_dot_precision": '''def _conv_dot_precision(t, fp32_math):
    """tl.dot's input precision for a convolution of operands like t: fp32 ones keep fp32
    accuracy (fp32_math: "tf32x3" or "ieee") unless TF32 is allowed for convolutions
    (torch.backends.cudnn.allow_tf32, the flag PyTorch's own convolutions obey); 16-bit ones
    need none."""
    if t.dtype != torch.float32:
        return None
    return "tf32" if torch.backends.cudnn.allow_tf32 else fp32_math''',
    "_conv_stages": '''def _conv_stages(stages, block_m, block_n, block_k, x, out_bytes, smem,
                 m_major=True):
    """The pipeline's depth: at most stages, within smem bytes of shared memory. Each stage
    holds a patch block and a filter block ((block_m + block_n) x block_k values of x's dtype);
    the epilogue converts the block_m x block_n output tile (out_bytes a value) through shared
    memory; a patch block gathered M-major (from an NCHW input) takes one more block for a
    32-bit operand, which Triton transposes for the tensor cores. At least one stage."""
    item = x.element_size()
    stage = (block_m + block_n) * block_k * item
    room = smem - block_m * block_n * out_bytes
    if item == 4 and m_major:
        room -= block_m * block_k * item
    return max(1, min(stages, room // stage))''',
    "_conv_tma_operands": '''def _conv_tma_operands(x, w, block_h, block_w, block_n, block_k):
    """Tensor-memory-accelerator descriptors of a channels-last input (N x C x H x W stored
    NHWC) as [N, H, W, C] in boxes of [1, block_h, block_w, block_k], and of a [C_out, KH, KW,
    C_in] weight as [C_out, KH * KW, C_in] in boxes of [block_n, 1, block_k]; (None, None)
    where a descriptor cannot describe them: a GPU before Hopper, rows of channels no multiple
    of 16 bytes, an unaligned address, an input not stored channels-last."""
    if x.device.type == "cuda" and _cuda_device(x.device)[1] < 9:
        return None, None
    n, c, h, wd = x.shape
    c_out = w.shape[0]
    xs = x.permute(0, 2, 3, 1)
    ws = w.reshape(c_out, -1, c) if w.is_contiguous() else None
    if ws is None or not xs.is_contiguous() or min(n, c, h, wd, c_out) == 0:
        return None, None
    if (c * x.element_size()) % 16 or x.data_ptr() % 16 or w.data_ptr() % 16:
        return None, None
    x_desc = _descriptor(xs, list(xs.shape), list(xs.stride()), [1, block_h, block_w, block_k])
    w_desc = _descriptor(ws, list(ws.shape), list(ws.stride()), [block_n, 1, block_k])
    return x_desc, w_desc''',
    "_tma_tile": '''def _tma_tile(oh, ow, block_m):
    """(block_h, block_w): a TMA tile of block_m output positions as block_h rows of block_w
    columns of one image (block_w a power of two), the shape whose tiles cover the fewest
    positions past the image's edges, the widest of those: 192 columns in tiles 128 wide
    would multiply a third more positions than there are, 64 wide none."""
    best = None
    bw = 1
    while bw < min(block_m, ow):
        bw *= 2
    while bw >= 1:
        bh = block_m // bw
        covered = -(-oh // bh) * bh * (-(-ow // bw) * bw)
        if best is None or covered < best[0]:
            best = (covered, bh, bw)
        bw //= 2
    return best[1], best[2]''',
    "_nhwc_copy": '''@triton.jit
def _nhwc_copy_kernel(x_ptr, y_ptr, C, P, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    # y[n, p, c] = x[n, c, p]: a tile of BLOCK_C channels x BLOCK_P positions of one image,
    # read along positions and written along channels (Triton exchanges the tile through
    # shared memory, so both sides are coalesced)
    n = tl.program_id(2).to(tl.int64)
    offs_c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    offs_p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    inside = (offs_c < C)[:, None] & (offs_p < P)[None, :]
    image = n * C * P
    v = tl.load(x_ptr + image + offs_c[:, None] * P + offs_p[None, :], mask=inside)
    tl.store(y_ptr + image + offs_p[None, :] * C + offs_c[:, None], v, mask=inside)


def _nhwc_copy(x):
    """x (N x C x H x W, or N x C x D x H x W) stored channels-last, as x.contiguous(
    memory_format=torch.channels_last) (channels_last_3d) does, by a tiled kernel: PyTorch's
    copy of this permutation writes with a stride and ran at half the speed of torch.compile's
    tiled copy (H200, bf16, 128 x 64 x 128 x 128). x itself where it already is channels-last;
    PyTorch's copy where x is not contiguous, where an image's offsets pass 32 bits or where
    the images pass the grid's 65535."""
    fmt = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
    if x.is_contiguous(memory_format=fmt):
        return x
    n, c = x.shape[0], x.shape[1]
    p = x.numel() // max(1, n * c)  # positions an image
    if not x.is_contiguous() or c * p >= 2**31 or n > 65535:
        return x.contiguous(memory_format=fmt)
    y = torch.empty_like(x, memory_format=fmt)
    grid = ((p + 63) // 64, (c + 63) // 64, n)
    _launch(_nhwc_copy_kernel, grid, x, y, c, p, BLOCK_C=64, BLOCK_P=64, num_warps=4)
    return y''',
    "_position_strides": '''def _position_strides(y):
    """(y, (stride of an image, of a channel, of an output position)) for an N x C x spatial
    tensor whose positions are evenly strided, as in NC(D)HW and N(D)HWC storage alike;
    otherwise a contiguous copy of y with its strides."""
    dims = [(n, s) for n, s in zip(y.shape[2:], y.stride()[2:]) if n > 1]
    step = dims[-1][1] if dims else 1
    span = step
    for n, s in reversed(dims):
        if s != span:
            y = y.contiguous()
            return y, (y.stride(0), y.stride(1), 1)
        span *= n
    return y, (y.stride(0), y.stride(1), step)''',
}
