"""MaxPool3d, 3 x 3 x 3 window, stride 2, padding 1, over video/volume features (N, C, D, H, W).

Padded positions count as -inf (inputs are signed, so treating them as 0 gives wrong maxima at
the borders); windows overlap by one plane in every dimension.

Sizes: 8 x 32 x 64 x 128 x 128 fp32 (1.07 GB in, 0.13 GB out); H200 floor ~0.28 ms, eager (3-D
pooling kernels are less tuned than 2-D) estimated at ~0.4-1 ms. Small: 2 x 3 x 5 x 7 x 9.
"""

import torch
import torch.nn as nn

batch_size = 8
channels = 32
depth = 64
height = 128
width = 128

KERNELWRIGHT = {
    "family": "pool",
    "small": {"batch_size": 2, "channels": 3, "depth": 5, "height": 7, "width": 9},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []
