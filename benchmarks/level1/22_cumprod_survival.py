"""Cumulative product along the last axis: survival curves from per-step keep probabilities.

    S[i, j] = prod_{k <= j} p[i, k],   p = 1 - hazard

Why these values: a cumprod over thousands of N(0, 1) values underflows to 0 (or overflows)
within a few dozen steps, a degenerate task. Here most steps keep everything (p = 1) and about
12 steps per row, at random places, have a hazard uniform in [0, 0.5]; each costs 0.31 of
log-survival on average, so rows decay from 1 to about exp(-3.7) ~ 0.03 at their end, at any
row length (the event rate follows ``cols``, so the small size behaves alike). Sparse, sizeable
hazards rather than dense tiny ones (p = 1 - 0.001 u) keep the task alive under the bf16
policy: bf16 rounds every value within 0.001 of 1 to exactly 1, which would make the output
constant. The inputs lie in [0, 1], which the harness's trial transforms (scaled x64,
heavy-tailed, shifted, tiny) leave alone: scaling a product of 8192 factors by 64 overflows in
any kernel. So every trial draws this distribution with a fresh seed.

Sizes: 29488x8192 inputs, 1.93 GB in and out per call (H200 floor ~0.45 ms at 4.3 TB/s); `rows`
was scaled 1.8x after a measured H200 sweep so that eager fp32 takes about 1 ms or more
(BENCHMARKS.md). Small: 37 x 100.
"""

import torch
import torch.nn as nn

rows = 29488
cols = 8192
events_per_row = 12.0

KERNELWRIGHT = {"family": "scan", "small": {"rows": 37, "cols": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, keep):
        return torch.cumprod(keep, dim=-1)


def get_inputs():
    event = torch.rand(rows, cols) < events_per_row / cols
    hazard = torch.rand(rows, cols) * 0.5
    return [1.0 - hazard * event]


def get_init_inputs():
    return []
