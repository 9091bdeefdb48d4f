"""Linear layer then exact (erf) GELU: y = gelu(x @ W^T + b), the up-projection of a BERT MLP.

Epilogue (2 ops): bias, GELU. Eager folds the bias into cuBLAS's addmm and runs GELU as a second
kernel over the 134 MB output; a fused kernel applies it in registers before the store.

Sizes: 4096 tokens, 2048 -> 8192 features: 137 GFLOP, 34 MB in, 67 MB of weights, 134 MB out.
Compute-bound at fp32 (~2.7 ms at 50 TFLOP/s); eager estimated at ~2.9 ms.
Small: 37 tokens, 20 -> 45 features.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 4096
in_features = 2048
out_features = 8192

KERNELWRIGHT = {
    "family": "gemm_epilogue",
    "small": {"tokens": 37, "in_features": 20, "out_features": 45},
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]
