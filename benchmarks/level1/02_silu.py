"""SiLU (swish), x * sigmoid(x), over a (batch, seq, hidden) activation of an LLM MLP.

Sizes: 32 x 4096 x 1792 fp32 = 235M elements, 0.94 GB in and 0.94 GB out. A single read and
write: the H200 floor is ~0.44 ms and eager (one kernel) is estimated at ~0.6 ms, under 1 ms on
purpose so one call stays under ~2 GB. Small: 3 x 37 x 20 (rows not a multiple of any block).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
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
