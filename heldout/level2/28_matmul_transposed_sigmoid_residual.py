"""Product with a transposed right operand given as an input, sigmoid, then a residual:
y = sigmoid(a @ b^T) + c.

Both operands are activations (no weights): b is (n, k), so b^T is read K-major as stored.
Epilogue (2 ops): sigmoid, an added (m, n) tensor.

Sizes: m = 3000, n = 4000, k = 2600 (none a power of two): 62 GFLOP, 31 + 42 MB of operands,
48 MB residual, 48 MB out. Compute-bound at fp32 (~1.3 ms); eager estimated ~1.5 ms.
Small: m = 37, n = 29, k = 45.
"""

import torch
import torch.nn as nn

m = 3000
n = 4000
k = 2600

KERNELWRIGHT = {"family": "gemm_epilogue", "small": {"m": 37, "n": 29, "k": 45}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, c):
        return torch.sigmoid(a @ b.t()) + c


def get_inputs():
    return [torch.randn(m, k), torch.randn(n, k), torch.randn(m, n)]


def get_init_inputs():
    return []
