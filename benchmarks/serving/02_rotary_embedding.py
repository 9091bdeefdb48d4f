"""Rotary position embedding (NeoX layout) applied to packed query and key projections.

    for each head:  (x1, x2) = halves of the head's 128 features
                    out = (x1 * cos - x2 * sin, x2 * cos + x1 * sin),  angles = pos * base^(-2i/d)

As serving engines call it: query (tokens, q_heads * head_dim) and key (tokens, kv_heads *
head_dim) with grouped-query heads (32 query, 8 key heads), int64 positions per token (any order,
as in a batch of sequences), and a cos/sin table computed once for max_position positions and
stored as buffers. Positions are drawn in [0, max_position), valid at every size.

Sizes: 24576 tokens, head_dim 128: query 403 MB, key 101 MB, outputs the same (1.0 GB moved in
all, plus 8 MB of tables); H200 floor ~0.24 ms. Eager (gathers, slicing, four products, two
sums and a concatenation per tensor: about nine passes over the data) estimated at ~1.4 ms.
Small: 37 tokens, 6 query and 2 key heads of dim 16, 64 positions.
"""

import torch
import torch.nn as nn

tokens = 24576
q_heads = 32
kv_heads = 8
head_dim = 128
max_position = 8192
base = 10000.0

KERNELWRIGHT = {
    "family": "serving",
    "notes": "rotary embedding (elementwise, gather)",
    "small": {"tokens": 37, "q_heads": 6, "kv_heads": 2, "head_dim": 16, "max_position": 64},
}


class Model(nn.Module):
    def __init__(self, head_dim, max_position, base):
        super().__init__()
        self.head_dim = head_dim
        exponents = torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim
        inv_freq = 1.0 / (base**exponents)
        angles = torch.outer(torch.arange(max_position, dtype=torch.float32), inv_freq)
        self.register_buffer("cos_table", angles.cos(), persistent=False)
        self.register_buffer("sin_table", angles.sin(), persistent=False)

    def _rotate(self, x, cos, sin):
        heads = x.view(x.shape[0], -1, self.head_dim)
        x1, x2 = heads.chunk(2, dim=-1)
        rotated = torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
        return rotated.view(x.shape)

    def forward(self, positions, query, key):
        cos = self.cos_table[positions].unsqueeze(1)
        sin = self.sin_table[positions].unsqueeze(1)
        return self._rotate(query, cos, sin), self._rotate(key, cos, sin)


def get_inputs():
    positions = torch.randint(0, max_position, (tokens,))
    query = torch.randn(tokens, q_heads * head_dim)
    key = torch.randn(tokens, kv_heads * head_dim)
    return [positions, query, key]


def get_init_inputs():
    return [head_dim, max_position, base]
