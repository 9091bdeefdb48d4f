"""Linear layer, scale, residual add and clamp: y = clamp((x @ W^T + b) * s + r, -c, c).

Epilogue (4 ops): bias, scaling by s = 0.5, residual add of a second input r, clamp to
[-2.5, 2.5]. With PyTorch's default init the scaled product has std ~0.3 and r ~ N(0, 1), so a
few percent of outputs hit the clamp (many more under the harness's scaled trials).

Sizes: 4096 tokens, 4096 -> 4096 features: 137 GFLOP; x, r and y are 67 MB each, W 67 MB.
Compute-bound at fp32 (~2.7 ms); eager adds three element-wise passes, estimated ~2.9 ms.
Small: 37 tokens, 29 -> 45 features.
"""

import torch
import torch.nn as nn

tokens = 4096
in_features = 4096
out_features = 4096
scale = 0.5
clamp_limit = 2.5

KERNELWRIGHT = {
    "family": "gemm_epilogue",
    "small": {"tokens": 37, "in_features": 29, "out_features": 45},
}


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x, residual):
        y = self.linear(x) * scale + residual
        return torch.clamp(y, -clamp_limit, clamp_limit)


def get_inputs():
    return [torch.randn(tokens, in_features), torch.randn(tokens, out_features)]


def get_init_inputs():
    return [in_features, out_features]
