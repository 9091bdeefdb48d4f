"""Row softmax in one pass: each program loads one row into registers, reduces, writes once."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols  # the row may be shorter than the power-of-two block
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    y = torch.empty_like(x2)
    n_rows, n_cols = x2.shape
    block = triton.next_power_of_2(n_cols)
    warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
    softmax_kernel[(n_rows,)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=block,
                              num_warps=warps)
    return y.reshape(x.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax(x)
