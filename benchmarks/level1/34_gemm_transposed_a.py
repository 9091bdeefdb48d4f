"""Matrix product with a transposed operand: C = A^T @ B, A stored (K, M), B stored (K, N).

A^T's rows are A's columns, so the kernel loads A with the reduction axis outermost (as in a
weight-gradient product, X^T @ dY). Sizes: K = 4096, M = 3072, N = 5120: 129 GFLOP on 50 + 84 MB
in, 63 MB out; compute-bound at fp32, eager estimated at ~2.6 ms (cuBLAS handles the transpose
as a layout flag, no copy). Small: K = 45, M = 37, N = 29.
"""

import torch
import torch.nn as nn

k = 4096
m = 3072
n = 5120

KERNELWRIGHT = {"family": "gemm", "small": {"k": 45, "m": 37, "n": 29}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a.T, b)


def get_inputs():
    return [torch.randn(k, m), torch.randn(k, n)]


def get_init_inputs():
    return []
