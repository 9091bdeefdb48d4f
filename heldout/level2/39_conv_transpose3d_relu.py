"""4 x 4 x 4 transposed convolution with bias (stride 2, padding 1), then ReLU: the upsampling
step of a volumetric decoder, doubling each side.

Epilogue (1 op after the convolution and its bias): ReLU.

Sizes: 8 x 64 x 16 x 32 x 32 in (34 MB), 32 output channels at 32 x 64 x 64 (134 MB out):
34 GFLOP. Compute-bound at fp32 (~1 ms at an assumed 35 TFLOP/s); eager adds a pass over the
output. Small: 2 x 3 x 3 x 4 x 5 in, 5 output channels.
"""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 64
out_channels = 32
depth = 16
height = 32
width = 32

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {
        "batch_size": 2,
        "in_channels": 3,
        "out_channels": 5,
        "depth": 3,
        "height": 4,
        "width": 5,
    },
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose3d(in_channels, out_channels, 4, stride=2, padding=1)

    def forward(self, x):
        return torch.relu(self.up(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
