"""AvgPool2d, 7 x 7 window, stride 7 (a ResNet-style head pooling, on large feature maps).

Each output averages 49 inputs and no two windows overlap: the kernel's unrolled program grows
with the window (7 input rows an output, each read in 7 vector loads), which bounds how many
outputs along H one program may take.

Sizes: 64x256x224x224 inputs, 3.3 GB in and 67 MB out per call (H200 floor ~0.8 ms at
4.3 TB/s). Small: 2 x 3 x 16 x 19 (two windows and a ragged remainder along each axis).
"""

import torch
import torch.nn as nn

batch_size = 64
channels = 256
height = 224
width = 224

KERNELWRIGHT = {
    "family": "pool",
    "small": {"batch_size": 2, "channels": 3, "height": 16, "width": 19},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=7, stride=7)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
