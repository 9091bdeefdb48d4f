"""Lower triangle of a scaled product below its diagonal, plus a bias:
torch.tril(A @ B * 0.5, diagonal=-1) + bias, (2500 x 3000) @ (3000 x 2500).

A strictly lower triangle (a diagonal offset), a scale before the mask and a per-column bias
after it: the tiles above the diagonal hold only the bias. Sizes: 37.5 GFLOP for the whole
product, 30 + 30 MB in, 25 MB out; compute-bound at fp32. Small: 37 x 21 @ 21 x 40.
"""

import torch
import torch.nn as nn

m = 2500
k = 3000
n = 2500

KERNELWRIGHT = {"family": "gemm_epilogue", "small": {"m": 37, "k": 21, "n": 40}}


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n) * 0.1)

    def forward(self, a, b):
        return torch.tril(torch.matmul(a, b) * 0.5, diagonal=-1) + self.bias


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return [n]
