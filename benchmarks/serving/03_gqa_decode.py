"""Grouped-query attention for one decode step over a padded KV cache with per-sequence lengths.

    q (batch, 32 heads, 128), k_cache and v_cache (batch, 8 kv heads, max_len, 128),
    cache_seqlens (batch,) int32 in [1, max_len]:  out[b, h] = softmax_{s < len_b}(q.k / sqrt d) v

Query heads share KV heads in groups of 4 (head h reads KV head h // 4). The reference follows
the Hugging Face pattern: repeat the KV heads to the query heads (a 4x copy of the cache), then
two batched matrix-vector products and a masked softmax. A decode kernel reads each KV head
once for its whole group and stops at each sequence's length. Lengths are drawn per seed in
[1, max_len] (never 0, so no row is fully masked); on average half the cache is valid.

Sizes: batch 16, max_len 8192: K and V caches 0.54 GB each (1.07 GB in), output 0.26 MB. H200
floor ~0.25 ms for reading the whole cache (less with lengths); eager (two 2.1 GB copies read
back by the products) estimated at ~3 ms. Input variants: other batch sizes and an odd cache
length. Small: batch 3, 6 query / 2 KV heads (groups of 3), 37 cache slots, dim 16.
"""

import torch
import torch.nn as nn

batch_size = 16
q_heads = 32
kv_heads = 8
max_len = 8192
head_dim = 128

KERNELWRIGHT = {
    "family": "serving",
    "notes": "grouped-query attention decode (attention)",
    "small": {"batch_size": 3, "q_heads": 6, "kv_heads": 2, "max_len": 37, "head_dim": 16},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k_cache, v_cache, cache_seqlens):
        group = q.shape[1] // k_cache.shape[1]
        slots = k_cache.shape[2]
        k = k_cache.repeat_interleave(group, dim=1)
        v = v_cache.repeat_interleave(group, dim=1)
        scores = torch.matmul(k, q.unsqueeze(-1)).squeeze(-1) * q.shape[-1] ** -0.5
        valid = torch.arange(slots, device=q.device) < cache_seqlens.unsqueeze(-1)
        scores = scores.masked_fill(~valid.unsqueeze(1), float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs.unsqueeze(-2), v).squeeze(-2)


def _decode_inputs(batch, slots):
    q = torch.randn(batch, q_heads, head_dim)
    k_cache = torch.randn(batch, kv_heads, slots, head_dim)
    v_cache = torch.randn(batch, kv_heads, slots, head_dim)
    cache_seqlens = torch.randint(1, slots + 1, (batch,), dtype=torch.int32)
    return [q, k_cache, v_cache, cache_seqlens]


def get_inputs():
    return _decode_inputs(batch_size, max_len)


def get_input_variants():
    return [_decode_inputs(1, max_len), _decode_inputs(batch_size // 4 + 1, max_len // 2 + 3)]


def get_init_inputs():
    return []
