"""Matrix product with no dimension a multiple of a tile: (4099 x 3583) @ (3583 x 2777).

Every edge tile is partial in M, N and K, so masking bugs show at full size too, not only at
the small one. Sizes: 81.6 GFLOP, 59 + 40 MB in, 46 MB out; compute-bound at fp32, eager
estimated at ~1.7-2 ms. Input variants: other odd shapes derived from these (one with a single
row). Small: 37 x 45 @ 45 x 29.
"""

import torch
import torch.nn as nn

m = 4099
k = 3583
n = 2777

KERNELWRIGHT = {"family": "gemm", "small": {"m": 37, "k": 45, "n": 29}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_input_variants():
    return [
        [torch.randn(m // 3 + 1, k // 2 + 1), torch.randn(k // 2 + 1, n + 6)],
        [torch.randn(1, k), torch.randn(k, n // 4 + 3)],
    ]


def get_init_inputs():
    return []
