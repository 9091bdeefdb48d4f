"""LayerNorm over the hidden dimension of (tokens, hidden) activations, with a learned affine.

The affine weight and bias are drawn at random at construction (not PyTorch's 1 and 0), so a
kernel that drops them fails.

Sizes: 40960x8192 inputs, 2.68 GB in and out per call (H200 floor ~0.62 ms at 4.3 TB/s);
`tokens` was scaled 2.5x after a measured H200 sweep so that eager fp32 takes about 1 ms or more
(BENCHMARKS.md). Input variants: other token counts,
including a (batch, seq, hidden) 3-D input. Small: 37 tokens x 100 hidden.
"""

import torch
import torch.nn as nn

tokens = 40960
hidden = 8192
eps = 1e-5

KERNELWRIGHT = {"family": "norm", "small": {"tokens": 37, "hidden": 100}}


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_input_variants():
    return [
        [torch.randn(tokens // 4 + 3, hidden)],
        [torch.randn(3, tokens // 8 + 1, hidden)],
    ]


def get_init_inputs():
    return [hidden]
