"""GELU, tanh approximation (the GPT-2/BERT form), element-wise over a (batch, dim) activation.

    y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))

Sizes: 16384 x 14336 fp32, 0.94 GB in and 0.94 GB out. One read and one write is all the work,
so the H200 floor is ~0.44 ms and eager (one kernel) is estimated at ~0.6 ms: under the suite's
1 ms target on purpose, since a larger tensor would push one call past ~2 GB.
Small: 37 x 100.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
dim = 14336

KERNELWRIGHT = {"family": "elementwise", "small": {"batch_size": 37, "dim": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
