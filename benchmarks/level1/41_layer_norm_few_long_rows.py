"""LayerNorm over the last three axes of a (batch, channels, height, width) tensor, with its
affine weight and bias: 48 rows of 32 x 384 x 384 = 4.7 M values.

Forty-eight rows leave most SMs idle with one program a row, and a row is longer than a resident team
of programs holds in registers: the statistics are split across programs with a second small
pass (the few-long-rows class). KernelBench's LayerNorm (16 rows of 64 x 256 x 256) is this
class at another size.

Sizes: 48x32x384x384 inputs, 0.91 GB in per call plus 19 MB of weight and bias (H200 floor
~0.43 ms at 4.3 TB/s).
Small: 2 x 3 x 5 x 7.
"""

import torch
import torch.nn as nn

batch_size = 48
features = 32
dim1 = 384
dim2 = 384

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 2, "features": 3, "dim1": 5, "dim2": 7},
}


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)
        with torch.no_grad():  # weights away from their defaults, so a kernel that drops them fails
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [(features, dim1, dim2)]
