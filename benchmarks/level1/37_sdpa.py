"""Scaled dot-product attention, non-causal: softmax(Q K^T / sqrt(d)) V per (batch, head).

Sizes: batch 8, 16 heads, 2048 queries and keys, head dim 64, fp32: 4 x 67 MB of Q, K, V and
output, 137 GFLOP. Eager fp32 runs PyTorch's memory-efficient attention kernel (flash needs
16-bit inputs) on CUDA cores, estimated at ~4-6 ms. Small: batch 2, 3 heads, 37 tokens, dim 16.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
heads = 16
seq_len = 2048
head_dim = 64

KERNELWRIGHT = {
    "family": "attention",
    "small": {"batch_size": 2, "heads": 3, "seq_len": 37, "head_dim": 16},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    shape = (batch_size, heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
