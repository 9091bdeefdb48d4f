"""LayerNorm over the last three axes (normalized_shape (64, 128, 128)), with affine weights.

Held-out task, written 2026-12-01. Each row holds 1M elements, far more than one block: the
reduction is split across programs. The weight and bias (1M elements each) are drawn at random.

Sizes: 128x64x128x128 inputs, 1.08 GB in and out per call (H200 floor ~0.25 ms at 4.3 TB/s).
Small: 3 x 5 x 7 x 9.
"""

import torch
import torch.nn as nn

batch_size = 128
features = 64
dim1 = 128
dim2 = 128

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 3, "features": 5, "dim1": 7, "dim2": 9},
}


class Model(nn.Module):
    def __init__(self, features, dim1, dim2):
        super().__init__()
        self.norm = nn.LayerNorm((features, dim1, dim2))
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features, dim1, dim2]
