"""Log-softmax over the class axis (dim 1) of segmentation logits (N, classes, pixels).

The reduction axis is not the innermost one: each softmax reads a strided column of 150 values
(ADE20K's class count) while the pixels are contiguous, the layout of a per-pixel classifier.

Sizes: 16 x 150 x 65536 fp32 (0.63 GB in, 0.63 GB out); H200 floor ~0.29 ms, eager (one
strided multi-pass kernel) estimated at ~0.5-1 ms. Small: 3 x 7 x 37.
"""

import torch
import torch.nn as nn

batch_size = 16
classes = 150
pixels = 65536

KERNELWRIGHT = {
    "family": "softmax",
    "small": {"batch_size": 3, "classes": 7, "pixels": 37},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        return torch.log_softmax(logits, dim=1)


def get_inputs():
    return [torch.randn(batch_size, classes, pixels)]


def get_init_inputs():
    return []
