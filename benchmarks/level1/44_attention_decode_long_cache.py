"""One decode step of a single sequence against a long cache: grouped-query heads, through
F.scaled_dot_product_attention.

With one sequence there are only as many query rows as heads (32), too few to fill the GPU with
one program a row: the keys must be split over programs and the partial softmaxes merged
(flash-decoding). Each key/value head serves its group of 4 query heads.

Sizes: 1 sequence, 32 query heads on 8 key/value heads, 65536 cached tokens, head dim 128, fp32:
K and V 268 MB each, q and out 16 KB; H200 floor ~0.13 ms at 4.2 TB/s.
Small: 1 sequence, 4 query heads on 2 key/value heads, 300 cached tokens, head dim 16.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

sequences = 1
heads = 32
kv_heads = 8
cached = 65536
head_dim = 128

KERNELWRIGHT = {
    "family": "attention",
    "small": {"sequences": 1, "heads": 4, "kv_heads": 2, "cached": 300, "head_dim": 16},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def get_inputs():
    return [torch.randn(sequences, heads, 1, head_dim),
            torch.randn(sequences, kv_heads, cached, head_dim),
            torch.randn(sequences, kv_heads, cached, head_dim)]


def get_init_inputs():
    return []
