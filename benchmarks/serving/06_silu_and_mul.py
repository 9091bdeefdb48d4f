"""SwiGLU activation on a packed gate/up projection: silu(x[:, :I]) * x[:, I:].

Serving engines run the gate and up projections as one GEMM with 2 * I outputs and call this
activation (vLLM's silu_and_mul) on the result. Eager slices (views), runs SiLU on the first half
and multiplies: two kernels and an intermediate the size of the output.

Sizes: 11472x28672 inputs, 1.97 GB in and out per call (H200 floor ~0.46 ms at 4.3 TB/s);
`tokens` was scaled 1.4x after a measured H200 sweep so that eager fp32 takes about 1 ms or more
(BENCHMARKS.md). Small: 37 tokens, I = 45.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 11472
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
