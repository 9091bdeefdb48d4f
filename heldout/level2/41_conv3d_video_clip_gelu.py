"""3 x 3 x 3 convolution with bias over RGB video clips, then GELU: the first layer of a video
network (a C3D-style stem).

Epilogue (1 op after the convolution and its bias): exact GELU.

Sizes: 6 x 3 x 16 x 224 x 224 in (58 MB), 24 output channels at 16 x 224 x 224 (462 MB out):
19 GFLOP (81 taps an output value). Bound by writing the output at fp32. Small: 2 x 3 x 3 x 5 x
6 in, 4 output channels.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 6
out_channels = 24
frames = 16
height = 224
width = 224

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "out_channels": 4, "frames": 3, "height": 5, "width": 6},
}


class Model(nn.Module):
    def __init__(self, out_channels):
        super().__init__()
        self.stem = nn.Conv3d(3, out_channels, 3, padding=1)

    def forward(self, x):
        return F.gelu(self.stem(x))


def get_inputs():
    return [torch.randn(batch_size, 3, frames, height, width)]


def get_init_inputs():
    return [out_channels]
