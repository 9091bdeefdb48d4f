"""Upper-triangular product: torch.triu(A @ B) of (3072 x 2560) @ (2560 x 3072).

torch.triu is written as two position ranges, their difference and a comparison: the mask
joins the product's epilogue, and output tiles wholly below the diagonal need no product at all
(about half of them). Sizes: 48.3 GFLOP for the whole product, 31 + 31 MB in, 38 MB out;
compute-bound at fp32. Input variants: a rectangular product (more columns than rows) and one
whose rows outnumber its columns. Small: 45 x 29 @ 29 x 45.
"""

import torch
import torch.nn as nn

m = 3072
k = 2560
n = 3072

KERNELWRIGHT = {"family": "gemm", "small": {"m": 45, "k": 29, "n": 45}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.triu(torch.matmul(a, b))


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_input_variants():
    return [
        [torch.randn(m // 2 + 5, k // 2), torch.randn(k // 2, n + 3)],
        [torch.randn(m, k // 4), torch.randn(k // 4, n // 3 + 1)],
    ]


def get_init_inputs():
    return []
