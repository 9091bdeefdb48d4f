"""SiLU (swish), x * sigmoid(x), over a (batch, seq, hidden) activation of an LLM MLP.

Sizes: 64x4096x1792 inputs, 3.76 GB in and out per call (H200 floor ~0.87 ms at 4.3 TB/s);
`batch_size` was scaled 2.25x after a measured H200 sweep so that eager fp32 takes about 1 ms or
more (BENCHMARKS.md). Small: 3 x 37 x 20 (rows not a multiple of any block).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
seq_len = 4096
hidden = 1792

KERNELWRIGHT = {
    "family": "elementwise",
    "small": {"batch_size": 3, "seq_len": 37, "hidden": 20},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.silu(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return []
