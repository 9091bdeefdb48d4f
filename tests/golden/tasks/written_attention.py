"""MinGPT's causal self-attention written out (q @ k^T, a scale, masked_fill from a lower-
triangular buffer, softmax, dropout, @ v): recognised as one attention node, one flash-attention
kernel (and the mask's element-wise kernel)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
heads = 8
seq_len = 512
head_dim = 64
max_seqlen = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_dropout = nn.Dropout(0.1)
        causal = torch.tril(torch.ones(max_seqlen, max_seqlen))
        self.register_buffer("bias", causal.view(1, 1, max_seqlen, max_seqlen))

    def forward(self, q, k, v):
        T = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        return att @ v


def get_inputs():
    shape = (batch_size, heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
