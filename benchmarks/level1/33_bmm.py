"""Batched matrix product: (96 x 640 x 1024) @ (96 x 1024 x 768), one product per batch entry.

Sizes: 96.6 GFLOP on 0.25 GB + 0.30 GB in, 0.19 GB out; compute-bound at fp32: eager (one
strided-batched cuBLAS call) estimated at ~1.9-2.5 ms. Small: 3 x 37 x 20 @ 3 x 20 x 45.
"""

import torch
import torch.nn as nn

batch_size = 96
m = 640
k = 1024
n = 768

KERNELWRIGHT = {"family": "gemm", "small": {"batch_size": 3, "m": 37, "k": 20, "n": 45}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return []
