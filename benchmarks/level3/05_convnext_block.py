"""ConvNeXt block: depthwise 7x7 conv, channels-last LayerNorm, pointwise MLP (4x, GELU),
layer scale, residual.

    y = x + permute_back(gamma * fc2(gelu(fc1(LN(permute(dwconv7x7(x)))))))

Mixes a memory-bound depthwise convolution, layout changes (NCHW <-> NHWC), a LayerNorm over
the channel axis and two compute-bound pointwise GEMMs: the fusions and layouts a CNN block
needs. Layer scale gamma is drawn in [0.5, 1.5] (ConvNeXt starts it at 1e-6, which would make
the block nearly the identity).

Sizes: batch 128, 96 channels at 56 x 56 (ConvNeXt-T stage 1), 154 MB per activation,
MLP 96 -> 384 -> 96: 59 GFLOP in the GEMMs. Eager estimated at ~2-3 ms (depthwise 7x7 and the
layout changes are memory-bound). Small: batch 2, 8 channels, 9 x 11.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
channels = 96
height = 56
width = 56

KERNELWRIGHT = {
    "family": "block",
    "small": {"batch_size": 2, "channels": 8, "height": 9, "width": 11},
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.dwconv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        self.fc1 = nn.Linear(channels, 4 * channels)
        self.fc2 = nn.Linear(4 * channels, channels)
        self.gamma = nn.Parameter(torch.rand(channels) + 0.5)

    def forward(self, x):
        h = self.dwconv(x).permute(0, 2, 3, 1)
        h = self.fc2(F.gelu(self.fc1(self.norm(h))))
        return x + (self.gamma * h).permute(0, 3, 1, 2)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
