"""Grouped-query attention as LLaMA-family code writes it: repeat_kv, then softmax(Q K^T / sqrt(d))
V as two products around a softmax, non-causal.

Each key/value head is repeated for its group of consecutive query heads as Hugging Face
transformers' repeat_kv spells it (an expand of a new axis after the heads, then a reshape). No
mask: what the task adds to 37_sdpa is the grouping.

Sizes: batch 4, 32 query heads on 8 key/value heads (groups of 4), 2048 queries and keys, head
dim 128, fp32: 134 MB of Q and of output, 34 MB each of K and V, 275 GFLOP. Eager fp32 copies
the repeated K and V, runs both products as cuBLAS batched GEMMs and writes the 2.1 GB score
matrix three times (scores, scaled scores, softmax), estimated at ~10 ms. Small: batch 2,
6 query heads on 2 key/value heads, 37 tokens, dim 16.
"""

import math

import torch
import torch.nn as nn

batch_size = 4
heads = 32
kv_heads = 8
seq_len = 2048
head_dim = 128

KERNELWRIGHT = {
    "family": "attention",
    "small": {"batch_size": 2, "heads": 6, "kv_heads": 2, "seq_len": 37, "head_dim": 16},
}


def repeat_kv(x, n_rep):
    """(batch, kv_heads, seq, dim) -> (batch, kv_heads * n_rep, seq, dim): head h is x's head
    h // n_rep, as Hugging Face transformers' ``repeat_kv`` spells it."""
    batch, kv, seq, dim = x.shape
    if n_rep == 1:
        return x
    x = x[:, :, None, :, :].expand(batch, kv, n_rep, seq, dim)
    return x.reshape(batch, kv * n_rep, seq, dim)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        n_rep = q.shape[1] // k.shape[1]
        k = repeat_kv(k, n_rep)
        v = repeat_kv(v, n_rep)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(q.shape[-1])
        weights = torch.softmax(scores, dim=-1)
        return torch.matmul(weights, v)


def get_inputs():
    q = torch.randn(batch_size, heads, seq_len, head_dim)
    k = torch.randn(batch_size, kv_heads, seq_len, head_dim)
    v = torch.randn(batch_size, kv_heads, seq_len, head_dim)
    return [q, k, v]


def get_init_inputs():
    return []
