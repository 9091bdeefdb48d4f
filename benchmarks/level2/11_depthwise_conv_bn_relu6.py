"""Depthwise 3 x 3 convolution (no bias), BatchNorm at inference, ReLU6: the middle of a
MobileNetV2 inverted-residual block, at its widest expansion.

Epilogue (2 ops after the convolution): batch norm with running statistics (drawn at random at
construction, so it is not the identity), ReLU6. Each output value sums 9 taps of one input
channel: too few for tensor-core tiles, so the convolution is memory-bound (read the input once,
write the output once, if the taps' reuse stays in cache); eager adds two passes over the output.

Sizes: 128 x 144 x 112 x 112 in (925 MB), the same out, padding 1: 4.2 GFLOP; floor ~0.39 ms
at an H200's 4.8 TB/s. Small: 2 x 6 x 9 x 11 in.
"""

import torch
import torch.nn as nn

batch_size = 128
channels = 144
height = 112
width = 112

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "channels": 6, "height": 9, "width": 11},
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels,
                              bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.act = nn.ReLU6()
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.uniform_(0.1, 0.5)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
