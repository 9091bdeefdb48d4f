"""3 x 3 x 3 transposed convolution with bias (stride 2, output padding 1) to 16 channels, then
SiLU: the last upsampling step of a volumetric decoder, where few channels remain.

    y = silu(conv_transpose3d(x, W, b, stride 2, padding 1, output padding 1))

Sixteen output channels fill one 16-wide tensor-core tile; each output phase sums 48 input
channels x up to 2 x 2 x 2 taps.

Sizes: 8 x 48 x 24 x 48 x 48 in (85 MB), 8 x 16 x 48 x 96 x 96 out (226 MB): 18 GFLOP.
Compute-bound at fp32 (~0.5 ms at an assumed 35 TFLOP/s). Small: 2 x 5 x 3 x 4 x 5 in, 16
output channels (fewer would leave no tensor-core tile).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 48
out_channels = 16
depth = 24
height = 48
width = 48

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {
        "batch_size": 2,
        "in_channels": 5,
        "out_channels": 16,
        "depth": 3,
        "height": 4,
        "width": 5,
    },
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose3d(
            in_channels, out_channels, 3, stride=2, padding=1, output_padding=1
        )

    def forward(self, x):
        return F.silu(self.up(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
