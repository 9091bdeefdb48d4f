"""SwiGLU activation on a packed gate/up projection: silu(x[:, :I]) * x[:, I:].

Serving engines run the gate and up projections as one GEMM with 2 * I outputs and call this
activation (vLLM's silu_and_mul) on the result. Eager slices (views), runs SiLU on the first half
and multiplies: two kernels and an intermediate the size of the output.

Sizes: 8192 tokens, I = 14336 (Llama 3 8B): 0.94 GB in, 0.47 GB out; H200 floor ~0.33 ms,
eager estimated at ~0.7-0.9 ms. Small: 37 tokens, I = 45.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 8192
intermediate = 14336

KERNELWRIGHT = {
    "family": "serving",
    "notes": "SwiGLU activation (elementwise)",
    "small": {"tokens": 37, "intermediate": 45},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up


def get_inputs():
    return [torch.randn(tokens, 2 * intermediate)]


def get_init_inputs():
    return []
