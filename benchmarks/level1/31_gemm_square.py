"""Square matrix product C = A @ B with M = N = K = 4096.

Sizes: 137 GFLOP on 3 x 64 MB of fp32 data: compute-bound. Under the strict fp32 policy (no
TF32) cuBLAS runs near the H200's fp32 CUDA-core rate, ~50 TFLOP/s: eager ~2.7 ms. Under the
bf16 policy the same product is ~0.2 ms. Small: 67 x 67 x 67 (not a multiple of any tile).
"""

import torch
import torch.nn as nn

n = 4096

KERNELWRIGHT = {"family": "gemm", "small": {"n": 67}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n)]


def get_init_inputs():
    return []
