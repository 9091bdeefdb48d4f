"""Matrix product with few output tiles and a long reduction: (512 x 131072) @ (131072 x 512).

Only 16 output tiles of 128 x 128: a kernel that gives each tile one program leaves most of the
H200's 132 SMs idle, so the work must be split along K (split-K, or a stream-K schedule) and the
partial products added. Sizes: 68.7 GFLOP on 2 x 256 MB of fp32 operands, 1 MB out;
compute-bound at fp32 (~1.4 ms at 50 TFLOP/s), about half that under bf16 (the operands'
bytes). Input variants: odd shapes derived from these. Small: 37 x 2100 @ 2100 x 29 (K still
long enough to split).
"""

import torch
import torch.nn as nn

m = 512
k = 131072
n = 512

KERNELWRIGHT = {"family": "gemm", "small": {"m": 37, "k": 2100, "n": 29}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_input_variants():
    return [[torch.randn(m // 3 + 1, k // 2 + 3), torch.randn(k // 2 + 3, n // 4 + 1)]]


def get_init_inputs():
    return []
