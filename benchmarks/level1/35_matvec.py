"""Matrix-vector product y = A @ x, A (M, K), x (K, 1): pure streaming of A.

Sizes: M = 16384, K = 20480 fp32: A is 1.34 GB, read once; 0.67 GFLOP is nothing. H200 floor
~0.31 ms; eager (cuBLAS gemv) estimated at ~0.4-0.5 ms. Kept at ~1.3 GB per call rather than
stretched to 1 ms: a memory-bound task's speedup is about its fraction of bandwidth anyway.
Small: M = 37, K = 100.
"""

import torch
import torch.nn as nn

m = 16384
k = 20480

KERNELWRIGHT = {"family": "gemm", "small": {"m": 37, "k": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, x):
        return torch.matmul(a, x)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, 1)]


def get_init_inputs():
    return []
