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
    "_conv_stages": '''def _conv_stages(stages, block_m, block_n, block_k, x, out_bytes, smem):
    """The pipeline's depth: at most stages, within smem bytes of shared memory. Each stage
    holds a patch block and a filter block ((block_m + block_n) x block_k values of x's dtype);
    the epilogue converts the block_m x block_n output tile (out_bytes a value) through shared
    memory; the patch block, gathered M-major from an NCHW input, takes one more block for a
    32-bit operand, which Triton transposes for the tensor cores. At least one stage."""
    item = x.element_size()
    stage = (block_m + block_n) * block_k * item
    room = smem - block_m * block_n * out_bytes
    if item == 4:
        room -= block_m * block_k * item
    return max(1, min(stages, room // stage))''',
    "_position_strides": '''def _position_strides(y):
    """(y, (stride of an image, of a channel, of an output position)) for an N x C x OH x OW
    tensor whose positions (oh, ow) are evenly strided, as in NCHW and NHWC storage alike;
    otherwise a contiguous copy of y with its strides."""
    _, _, oh, ow = y.shape
    s_n, s_c, s_h, s_w = y.stride()
    if oh == 1 or ow == 1 or s_h == ow * s_w:
        return y, (s_n, s_c, s_w if ow > 1 else s_h)
    y = y.contiguous()
    return y, (y.stride(0), y.stride(1), 1)''',
}
