"""3 x 3 convolution with bias, then hardswish: the MobileNetV3 conv unit.

Epilogue (1 op after the convolution and its bias): hardswish, x * relu6(x + 3) / 6.

Sizes: 32 x 48 x 192 x 192 in (226 MB), 96 output channels (453 MB out), padding 1: 98 GFLOP.
Compute-bound at fp32 (cuDNN without TF32, ~35 TFLOP/s: ~2.8 ms); eager adds a pass over the
output, estimated ~3.0 ms. Small: 2 x 3 x 9 x 11 in, 5 output channels.
"""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 48
out_channels = 96
height = 192
width = 192

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "in_channels": 3, "out_channels": 5, "height": 9, "width": 11},
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)

    def forward(self, x):
        return torch.nn.functional.hardswish(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
