"""BatchNorm at inference, ReLU, 1 x 1 convolution (no bias), 2 x 2 average pool: a DenseNet
transition layer, halving the channels and the resolution.

The 1 x 1 convolution mixes channels pixel by pixel and the pool averages pixels channel by
channel: both are linear, so the pool can run first, on the normalised input, and the
convolution then takes a quarter of the pixels. Eager (and torch.compile) run the convolution
at full resolution and pool its output.

Sizes: 32 x 256 x 128 x 128 in (537 MB), 128 output channels, pooled to 64 x 64 (67 MB out).
In PyTorch's order: the norm and ReLU read and write 537 MB, the convolution (34 GFLOP) reads
537 and writes 268 MB, the pool reads 268 and writes 67 MB; pooled first, the pool reads the
norm's 537 MB and writes 134 MB, and the convolution (8.6 GFLOP) reads 134 and writes 67 MB.
Small: 2 x 12 x 9 x 11 in, 6 output channels.
"""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 256
out_channels = 128
height = 128
width = 128

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "in_channels": 12, "out_channels": 6, "height": 9, "width": 11},
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(in_channels)
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.uniform_(0.5, 1.5)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.pool(self.conv(torch.relu(self.bn(x))))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_input_variants():
    return [[torch.randn(1, in_channels, 7, 6)]]


def get_init_inputs():
    return [in_channels, out_channels]
