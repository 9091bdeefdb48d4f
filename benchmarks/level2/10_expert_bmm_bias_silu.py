"""Per-expert projection of a mixture-of-experts layer: y_e = silu(x_e @ W_e + b_e) for 8 experts.

Epilogue (2 ops): a per-expert bias broadcast over the tokens, SiLU. Eager runs one batched
cuBLAS product and two element-wise passes over the 134 MB output; a fused kernel applies both
to the accumulator before its one store.

Sizes: 8 experts x 2048 tokens, 2048 -> 2048 features: 137 GFLOP, 134 MB of tokens, 134 MB of
weights, 134 MB out. Compute-bound at fp32 (~2.7 ms at 50 TFLOP/s); eager estimated ~2.9 ms.
Small: 3 experts x 37 tokens, 20 -> 45 features.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

experts = 8
tokens = 2048
in_features = 2048
out_features = 2048

KERNELWRIGHT = {
    "family": "gemm_epilogue",
    "small": {"experts": 3, "tokens": 37, "in_features": 20, "out_features": 45},
}


class Model(nn.Module):
    def __init__(self, experts, in_features, out_features):
        super().__init__()
        scale = in_features**-0.5
        self.weight = nn.Parameter(torch.randn(experts, in_features, out_features) * scale)
        self.bias = nn.Parameter(torch.randn(experts, 1, out_features) * 0.1)

    def forward(self, x):
        return F.silu(torch.bmm(x, self.weight) + self.bias)


def get_inputs():
    return [torch.randn(experts, tokens, in_features)]


def get_init_inputs():
    return [experts, in_features, out_features]
