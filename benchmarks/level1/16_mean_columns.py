"""Mean over the first axis of a (rows, cols) matrix: a column reduction, (M, N) -> (N,).

Column means (feature statistics over a batch) reduce along the slow axis; a kernel must split
the rows across blocks to fill the GPU, since there are only N outputs.

Sizes: 65536 x 4096 fp32 = 1.07 GB in, 16 KB out. H200 floor ~0.25 ms; eager estimated at
~0.35-0.5 ms. Input variants: odd row and column counts, and a wide matrix with few rows.
Small: 37 x 100.
"""

import torch
import torch.nn as nn

rows = 65536
cols = 4096

KERNELWRIGHT = {"family": "reduction", "small": {"rows": 37, "cols": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=0)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_input_variants():
    return [
        [torch.randn(rows // 3 + 1, cols + 5)],
        [torch.randn(5, cols * 4 + 1)],
    ]


def get_init_inputs():
    return []
