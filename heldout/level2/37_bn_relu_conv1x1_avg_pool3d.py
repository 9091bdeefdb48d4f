"""BatchNorm at inference, ReLU, 1 x 1 x 1 convolution with bias, 2 x 2 x 2 average pool: a
3-D DenseNet transition (volumetric segmentation networks), halving the channels and each
spatial size.

Both the convolution (channels mixed voxel by voxel) and the pool (voxels averaged channel by
channel, each window's weights summing to 1) are linear, so the pool may run first and the
convolution, bias included, takes an eighth of the voxels.

Sizes: 4 x 64 x 64 x 128 x 128 in (1.07 GB), 32 output channels, pooled to 32 x 64 x 64
(67 MB out). In PyTorch's order the convolution (17 GFLOP) writes 537 MB that the pool
reads; pooled first it reads 134 MB and computes 2.1 GFLOP. Small: 2 x 6 x 4 x 6 x 7 in, 4
output channels.
"""

import torch
import torch.nn as nn

batch_size = 4
in_channels = 64
out_channels = 32
depth = 64
height = 128
width = 128

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {
        "batch_size": 2,
        "in_channels": 6,
        "out_channels": 4,
        "depth": 4,
        "height": 6,
        "width": 7,
    },
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.bn = nn.BatchNorm3d(in_channels)
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size=1)
        self.pool = nn.AvgPool3d(kernel_size=2)
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        return self.pool(self.conv(torch.relu(self.bn(x))))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_input_variants():
    return [[torch.randn(1, in_channels, 3, 5, 4)]]


def get_init_inputs():
    return [in_channels, out_channels]
