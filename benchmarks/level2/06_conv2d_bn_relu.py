"""3 x 3 convolution (no bias), BatchNorm at inference, ReLU: the ResNet/VGG conv unit.

Epilogue (2 ops after the convolution): batch norm with running statistics (drawn at random at
construction, so it is not the identity), ReLU. At inference the norm folds into a per-channel
scale and shift on the convolution's output; eager runs it as separate kernels.

Sizes: 32 x 64 x 128 x 128 in (134 MB), 128 output channels (268 MB out), padding 1: 77 GFLOP.
Compute-bound at fp32 (cuDNN without TF32, assumed ~35 TFLOP/s: ~2.2 ms); eager adds two
passes over the output, estimated ~2.5 ms. Small: 2 x 3 x 9 x 11 in, 5 output channels.
"""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 128
height = 128
width = 128

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "in_channels": 3, "out_channels": 5, "height": 9, "width": 11},
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.uniform_(0.1, 0.5)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
