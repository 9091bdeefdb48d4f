"""Attention decode: one new query per sequence against a cache of 4000 keys and values,
softmax(q K^T / sqrt(d)) V per (sequence, head), through F.scaled_dot_product_attention.

Memory-bound: every key and value is read once for a single query (2 FLOP per byte).

Sizes: 64 sequences, 16 heads, 4000 cached tokens, head dim 128: K and V 2.1 GB each, q and
out 0.5 MB; H200 floor ~1.0 ms at 4.3 TB/s. Eager estimated ~1.3 ms.
Small: 3 sequences, 2 heads, 37 cached tokens, head dim 16.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

sequences = 64
heads = 16
cached = 4000
head_dim = 128

KERNELWRIGHT = {
    "family": "attention",
    "small": {"sequences": 3, "heads": 2, "cached": 37, "head_dim": 16},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    return [torch.randn(sequences, heads, 1, head_dim),
            torch.randn(sequences, heads, cached, head_dim),
            torch.randn(sequences, heads, cached, head_dim)]


def get_init_inputs():
    return []
