"""Causal scaled-dot-product attention with grouped-query heads (8 query heads share 2 key/value
heads) and an explicit scale: one flash-attention kernel."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
heads = 8
kv_heads = 2
seq_len = 1024
head_dim = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.125, enable_gqa=True)


def get_inputs():
    return [
        torch.randn(batch_size, heads, seq_len, head_dim),
        torch.randn(batch_size, kv_heads, seq_len, head_dim),
        torch.randn(batch_size, kv_heads, seq_len, head_dim),
    ]


def get_init_inputs():
    return []
