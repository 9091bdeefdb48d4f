"""Causal depthwise 1-D convolution (width 4) with bias, then SiLU: the Mamba/Hyena short conv.

    y[b, d, t] = silu(bias[d] + sum_{j=0..3} w[d, j] * x[b, d, t - 3 + j]),  x[.., < 0] = 0

Written as PyTorch code does: a grouped Conv1d padded by 3 on both sides, the first L outputs
kept (so the last 3 are computed and discarded), then SiLU. The work is tiny (8 FLOPs per
output); a fused kernel is a single streaming pass.

Sizes: 16x4096x4096 inputs, 2.15 GB in and out per call (H200 floor ~0.50 ms at 4.3 TB/s);
`batch_size` was scaled 1.5x after a measured H200 sweep so that eager fp32 takes about 1 ms or
more (BENCHMARKS.md). Small: 3 x 5 channels x 37 steps.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 4096
length = 4096
kernel_size = 4

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 3, "channels": 5, "length": 37},
}


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(
            channels, channels, kernel_size, groups=channels, padding=kernel_size - 1
        )

    def forward(self, x):
        return F.silu(self.conv(x)[..., : x.shape[-1]])


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels, kernel_size]
