"""SwiGLU feed-forward (LLaMA style): down(silu(gate(x)) * up(x)), no biases.

Sizes: 4096 tokens, model dim 2048, hidden 5632 (the 8/3 * d ratio rounded to a multiple of
256, not a power of two): 283 GFLOP over three GEMMs, 34 MB in, 138 MB of weights, 34 MB out.
At fp32 the products dominate (~5.7 ms at 50 TFLOP/s); eager adds SiLU and a product over the
92 MB hidden activations, estimated ~5.9 ms. A fused kernel computes gate and up in one GEMM
and applies silu * up in its epilogue. Small: 37 tokens, dim 20, hidden 45.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 4096
dim = 2048
hidden = 5632

KERNELWRIGHT = {"family": "block", "small": {"tokens": 37, "dim": 20, "hidden": 45}}


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(tokens, dim)]


def get_init_inputs():
    return [dim, hidden]
