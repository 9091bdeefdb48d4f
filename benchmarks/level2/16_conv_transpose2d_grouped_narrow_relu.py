"""4 x 4 transposed convolution in 4 groups of 12 output channels (stride 2), then ReLU: the
upsampling step of a grouped (ResNeXt-style) decoder.

    y = relu(conv_transpose2d(x, W, b, stride 2, padding 1, groups 4))

Twelve output channels a group fill no 16-wide tensor-core tile of their own: a kernel either
multiplies the groups as one block-diagonal product (four times the multiply-adds, zeros
between the groups) or leaves them to cuDNN's grouped kernel.

Sizes: 16 x 96 x 64 x 64 in (25 MB), 16 x 48 x 128 x 128 out (50 MB): 2.4 GFLOP as grouped
(each output sums 24 input channels x 2 x 2 taps). Small: 2 x 12 x 5 x 6 in, 4 groups of 4
output channels.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 96
out_channels = 48
height = 64
width = 64

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "in_channels": 12, "out_channels": 16, "height": 5, "width": 6},
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1, groups=4)

    def forward(self, x):
        return F.relu(self.up(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
