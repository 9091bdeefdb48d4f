"""One decode step with grouped-query heads (8 query heads share 2 key/value heads) and a
boolean mask over the cache: the decode kernel, its keys split over programs, and the combine
kernel."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
heads = 8
kv_heads = 2
cached = 4096
head_dim = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)


def get_inputs():
    return [
        torch.randn(batch_size, heads, 1, head_dim),
        torch.randn(batch_size, kv_heads, cached, head_dim),
        torch.randn(batch_size, kv_heads, cached, head_dim),
        torch.rand(batch_size, 1, 1, cached) > 0.1,
    ]


def get_init_inputs():
    return []
