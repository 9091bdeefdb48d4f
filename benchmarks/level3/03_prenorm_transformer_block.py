"""Pre-norm transformer decoder block: causal self-attention and a GELU MLP, each behind a
LayerNorm and around a residual connection (GPT-2 layout).

    h = x + proj(attention(LN1(x)));   y = h + fc2(gelu(fc1(LN2(h))))

Sizes: batch 4, 1024 tokens, width 1024, 16 heads of 64, MLP 4096: ~120 GFLOP (QKV 26, output
projection 9, MLP 69, attention 17 of which the causal half is needed). Activations are 17 MB
per (tokens, width) tensor, weights 50 MB. At fp32 the GEMMs dominate; eager (memory-efficient
attention, two LayerNorms, residual adds, GELU) estimated at ~3 ms.
Small: batch 2, 37 tokens, width 24, 3 heads of 8, MLP 40.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 1024
dim = 1024
heads = 16
mlp_dim = 4096

KERNELWRIGHT = {
    "family": "block",
    "small": {"batch_size": 2, "seq_len": 37, "dim": 24, "heads": 3, "mlp_dim": 40},
}


class Model(nn.Module):
    def __init__(self, dim, heads, mlp_dim):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp_dim)
        self.fc2 = nn.Linear(mlp_dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        qkv = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, d // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return [dim, heads, mlp_dim]
