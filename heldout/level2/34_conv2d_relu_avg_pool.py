"""3 x 3 convolution without bias, ReLU, then 2 x 2 average pooling: a classic downsampling
stage.

Epilogue (2 ops after the convolution): ReLU, a 2 x 2 average pool with stride 2, which shrinks
the output fourfold: a fused kernel never writes the full-resolution map.

Sizes: 16 x 64 x 256 x 256 in (268 MB), 128 output channels (537 MB before pooling, 134 MB
after), padding 1: 155 GFLOP. Compute-bound at fp32 (~4.4 ms at ~35 TFLOP/s); eager estimated
~4.8 ms. Small: 2 x 3 x 10 x 14 in, 5 output channels.
"""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 256
width = 256

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "in_channels": 3, "out_channels": 5, "height": 10, "width": 14},
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False)
        self.pool = nn.AvgPool2d(2)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
