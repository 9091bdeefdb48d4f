"""Tall-skinny product: (65536 x 4096) @ (4096 x 128), a low-rank down-projection of many tokens.

Only 128 output columns: tiles along N are few, so a kernel must get its parallelism from M and
keep the skinny B resident. Sizes: 1.07 GB of A, 2 MB of B, 34 MB out; 68.7 GFLOP. At fp32 the
matrix rate bounds it (~1.4 ms at 50 TFLOP/s; eager estimated ~1.4-2 ms since narrow-N shapes
reach cuBLAS's peak less often); under bf16 it turns memory-bound (~0.25 ms floor).
Small: 100 x 67 @ 67 x 5.
"""

import torch
import torch.nn as nn

m = 65536
k = 4096
n = 128

KERNELWRIGHT = {"family": "gemm", "small": {"m": 100, "k": 67, "n": 5}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
