"""Classifier head: linear layer, divide by a temperature, softmax over the classes.

    p = softmax((x @ W^T + b) / T),   T = 0.7

Epilogue (3 ops): bias, scaling, a softmax over each full output row (16384 classes), which a
fused kernel can only finish once every N tile of the row is known (online softmax across
tiles, or a small second pass).

Sizes: 4096 rows, 1024 -> 16384 classes: 137 GFLOP, 17 MB in, 67 MB of weights, 268 MB out.
Compute-bound at fp32 (~2.7 ms); eager adds a divide and a softmax over the output, estimated
~3 ms. Small: 37 rows, 20 -> 100 classes.
"""

import torch
import torch.nn as nn

rows = 4096
in_features = 1024
classes = 16384
temperature = 0.7

KERNELWRIGHT = {
    "family": "gemm_epilogue",
    "small": {"rows": 37, "in_features": 20, "classes": 100},
}


class Model(nn.Module):
    def __init__(self, in_features, classes):
        super().__init__()
        self.head = nn.Linear(in_features, classes)

    def forward(self, x):
        return torch.softmax(self.head(x) / temperature, dim=-1)


def get_inputs():
    return [torch.randn(rows, in_features)]


def get_init_inputs():
    return [in_features, classes]
