"""3 x 3 convolution with bias, GroupNorm (8 groups), then the mean over channels and pixels: one
score per image (an energy or a quality head over normalised features).

Epilogue: bias, group normalisation (statistics over 8 channels x H x W per group, 131072
values), then a reduction over every dimension but the batch. The mean reads the normalised
tensor only to sum it: a fused design sums it where the norm computes it (per image and group,
then over the groups), so the normalised tensor is never written.

Sizes: 32 x 64 x 128 x 128 in (134 MB), 64 -> 64 channels, 134 MB of convolution output, 32
scores: 39 GFLOP. Small: 2 x 4 x 9 x 11, 4 -> 8 channels, 2 groups.
"""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 64
groups = 8
height = 128
width = 128

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "in_channels": 4, "out_channels": 8, "groups": 2, "height": 9,
              "width": 11},
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():  # not PyTorch's 1/0 defaults: a kernel that drops them fails
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(self.conv(x)).mean(dim=[1, 2, 3])


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups]
