"""AvgPool1d, kernel 5, stride 2, padding 2, over (N, C, L) sequence features.

Overlapping windows (kernel > stride) and zero padding at both ends, counted in the divisor
(PyTorch's default count_include_pad=True): every window divides by 5, also at the borders.

Sizes: 96x128x16384 inputs, 1.21 GB in and out per call (H200 floor ~0.28 ms at 4.3 TB/s);
`batch_size` was scaled 1.5x after a measured H200 sweep so that eager fp32 takes about 1 ms or
more (BENCHMARKS.md). Small: 3 x 5 x 37.
"""

import torch
import torch.nn as nn

batch_size = 96
channels = 128
length = 16384

KERNELWRIGHT = {
    "family": "pool",
    "small": {"batch_size": 3, "channels": 5, "length": 37},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=5, stride=2, padding=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []
