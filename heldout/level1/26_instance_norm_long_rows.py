"""InstanceNorm over (batch, channels, height, width), no affine: 8 x 36 = 288 rows of
1024 x 1200 = 1.2 M values (held-out task).

Written 2026-12-02. Rows are plentiful (one program a row fills the GPU) but too long for one
program's registers; a team of 8192-element slices would be 150 programs, more than the GPU's
SMs hold at once. The long-groups class (larger slices keep the team resident) was measured on
KernelBench's GroupNorm (896 rows of 2 M); this is the class with instance statistics at
another size.

Sizes: 8x36x1024x1200 inputs, 1.4 GB in per call (H200 floor ~0.66 ms at 4.3 TB/s).
Small: 2 x 3 x 5 x 7.
"""

import torch
import torch.nn as nn

batch_size = 8
features = 36
dim1 = 1024
dim2 = 1200

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 2, "features": 3, "dim1": 5, "dim2": 7},
}


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.norm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
