"""InstanceNorm2d with a learned affine: each (sample, channel) plane normalised on its own.

Used in style transfer and image-to-image networks; statistics are per instance, so the result
is the same in training and eval mode (no running statistics are tracked).

Sizes: 32 x 64 x 256 x 256 fp32 (0.54 GB in, 0.54 GB out), planes of 65536 values. H200 floor
~0.25 ms; eager (routed through batch norm on a reshaped tensor: statistics, then apply)
estimated at ~0.5-0.8 ms. Small: 3 x 5 x 7 x 9.
"""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 256
width = 256

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 3, "channels": 5, "height": 7, "width": 9},
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
