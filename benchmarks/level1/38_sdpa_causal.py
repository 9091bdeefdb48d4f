"""Scaled dot-product attention with a causal mask: query i attends to keys 0..i.

Sizes: batch 4, 16 heads, 4096 tokens, head dim 64, fp32 (4 x 67 MB). The flop counter reports
275 GFLOP (it counts the full score matrix); the causal half is ~137 GFLOP, and a kernel that
skips the masked tiles does only that. Eager fp32 (memory-efficient attention on CUDA cores)
estimated at ~5-6 ms. Input variants: shorter odd sequence lengths, where the diagonal cuts
through partial tiles. Small: batch 2, 3 heads, 37 tokens, dim 16.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
heads = 16
seq_len = 4096
head_dim = 64

KERNELWRIGHT = {
    "family": "attention",
    "small": {"batch_size": 2, "heads": 3, "seq_len": 37, "head_dim": 16},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def _qkv(batch, length):
    shape = (batch, heads, length, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_inputs():
    return _qkv(batch_size, seq_len)


def get_input_variants():
    return [_qkv(1, seq_len // 3 + 1), _qkv(batch_size + 1, seq_len // 8 + 5)]


def get_init_inputs():
    return []
