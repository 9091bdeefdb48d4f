"""Grouped-query attention written out: 32 query heads share 8 key/value heads (each K/V head
repeated for 4 query heads), softmax(Q K^T / sqrt(d)) V, non-causal.

The model spells it as PyTorch code (repeat_interleave, two products around a softmax), as
LLM code written before SDPA's enable_gqa often does; the (batch, 32, 1024, 1024) scores are
537 MB a call that a flash-style kernel never writes.

Sizes: batch 4, 1024 tokens, head dim 128: Q 67 MB, K and V 17 MB each, 67 MB out; 69 GFLOP.
Eager fp32: two batched products and a softmax through memory, estimated ~2.5 ms.
Small: batch 2, 6 query heads on 2 KV heads, 37 tokens, head dim 16.
"""

import math

import torch
import torch.nn as nn

batch = 4
q_heads = 32
kv_heads = 8
tokens = 1024
head_dim = 128

KERNELWRIGHT = {
    "family": "attention",
    "small": {"batch": 2, "q_heads": 6, "kv_heads": 2, "tokens": 37, "head_dim": 16},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        group = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        return torch.softmax(scores, dim=-1) @ v


def get_inputs():
    return [torch.randn(batch, q_heads, tokens, head_dim),
            torch.randn(batch, kv_heads, tokens, head_dim),
            torch.randn(batch, kv_heads, tokens, head_dim)]


def get_init_inputs():
    return []
