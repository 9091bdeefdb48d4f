"""3 x 3 x 3 convolution with bias, GELU, per-channel scale: the unit of a video or volumetric
UNet.

    y = gelu(conv3d(x, W, b, padding 1)) * gamma[c]

Epilogue (3 ops): bias, exact GELU, a learned per-channel scale.

Sizes: 8 x 32 x 16 x 64 x 64 in (67 MB), 64 output channels (134 MB out): 58 GFLOP.
Compute-bound at fp32 (~1.7 ms at an assumed 35 TFLOP/s); eager adds two passes over the
output. Small: 2 x 3 x 4 x 5 x 6 in, 5 output channels.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 32
out_channels = 64
depth = 16
height = 64
width = 64

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {
        "batch_size": 2,
        "in_channels": 3,
        "out_channels": 5,
        "depth": 4,
        "height": 5,
        "width": 6,
    },
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.gamma = nn.Parameter(torch.rand(out_channels, 1, 1, 1) + 0.5)

    def forward(self, x):
        return F.gelu(self.conv(x)) * self.gamma


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
