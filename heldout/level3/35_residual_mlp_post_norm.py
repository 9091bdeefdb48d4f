"""A residual MLP with a post-norm, as in BERT's feed-forward sublayer:
y = LayerNorm(x + W2 gelu(W1 x + b1) + b2).

Two products (768 -> 3072 -> 768) with GELU between them, a residual and a LayerNorm with a
learned affine over 768 features.

Sizes: 8192 tokens of 768: 77 GFLOP, 25 MB in and out, 19 MB of weights, 101 MB hidden
activation. Compute-bound at fp32 (~1.6 ms); eager estimated ~1.9 ms.
Small: 37 tokens, 20 -> 45 -> 20 features.
"""

import torch
import torch.nn as nn

tokens = 8192
dim = 768
hidden = 3072

KERNELWRIGHT = {"family": "block", "small": {"tokens": 37, "dim": 20, "hidden": 45}}


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)
        self.norm = nn.LayerNorm(dim)
        with torch.no_grad():  # not PyTorch's 1/0 defaults: a kernel that drops them fails
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))))


def get_inputs():
    return [torch.randn(tokens, dim)]


def get_init_inputs():
    return [dim, hidden]
