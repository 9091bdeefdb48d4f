"""y = 2x over a large tensor: a pure streaming kernel, the yardstick for memory bandwidth.

512 MB in and 512 MB out at full size; the speed-of-light floor is the bytes over the
measured copy bandwidth, so a good kernel reports a speed-of-light fraction near 1.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2.0


n = 128 * 1024 * 1024

KERNELWRIGHT = {"family": "elementwise", "small": {"n": 10007}}


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
