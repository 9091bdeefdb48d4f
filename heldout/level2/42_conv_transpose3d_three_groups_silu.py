"""3 x 3 x 3 transposed convolution in 3 groups of 10 output channels (stride 2, output
padding 1), then SiLU: a grouped volumetric upsampling layer.

    y = silu(conv_transpose3d(x, W, b, stride 2, padding 1, output padding 1, groups 3))

Sizes: 4 x 24 x 16 x 32 x 32 in (6 MB), 4 x 30 x 32 x 64 x 64 out (63 MB): 0.25 GFLOP as
grouped (each output sums 8 input channels x up to 2 x 2 x 2 taps). Small: 2 x 6 x 3 x 4 x 5
in, 3 groups of 6 output channels.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
in_channels = 24
out_channels = 30
depth = 16
height = 32
width = 32

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "in_channels": 6, "out_channels": 18, "depth": 3, "height": 4,
              "width": 5},
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1,
                                     output_padding=1, groups=3)

    def forward(self, x):
        return F.silu(self.up(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
