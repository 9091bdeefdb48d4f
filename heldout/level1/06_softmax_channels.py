"""Softmax over the channel axis of NCHW maps (dim=1, strided), per pixel (held-out task).

Written 2026-12-01. The reduced axis is not the contiguous one: each pixel's 96 channels lie
H*W apart.

Sizes: 48x96x160x192 inputs, 1.13 GB in and out per call (H200 floor ~0.26 ms at 4.3 TB/s).
Small: 3 x 5 x 7 x 9.
"""

import torch
import torch.nn as nn

batch_size = 48
channels = 96
height = 160
width = 192

KERNELWRIGHT = {
    "family": "softmax",
    "small": {"batch_size": 3, "channels": 5, "height": 7, "width": 9},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
