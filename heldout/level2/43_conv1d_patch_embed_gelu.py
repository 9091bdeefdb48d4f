"""1-D patch embedding: a convolution whose stride equals its 4 taps (each output position
reads its own 4 input positions, none shared), with bias, then GELU, as signal and sequence
models embed non-overlapping patches.

    y = gelu(conv1d(x, W, b, stride 4))

Sizes: 16 x 32 x 262144 in (537 MB), 16 x 128 x 65536 out (537 MB): 34 GFLOP (each output
sums 32 channels x 4 taps), as many input values as the product's patches hold. Small: 2 x 6 x
148 in, 10 output channels.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 32
out_channels = 128
length = 262144
patch = 4

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "in_channels": 6, "out_channels": 10, "length": 148},
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, patch):
        super().__init__()
        self.embed = nn.Conv1d(in_channels, out_channels, patch, stride=patch)

    def forward(self, x):
        return F.gelu(self.embed(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, patch]
