"""GroupNorm with its affine weight and bias over (batch, channels, height, width): 64 x 32
channels in 4 groups of 8 x 384 x 384 = 1.2 M values, 256 rows.

Rows are plentiful (one program a row fills the GPU) but too long for one program's registers:
a team of resident programs holds each row, one slice each. A team of 8192-element slices would
be 144 programs, more than the GPU's SMs hold at once, so the team takes larger slices instead of
falling back to sweeping each row twice (the long-groups class). KernelBench's GroupNorm (896
rows of 8 x 512 x 512) is this class at another size.

Sizes: 64x32x384x384 inputs, 1.2 GB in per call (H200 floor ~0.56 ms at 4.3 TB/s).
Small: 2 x 4 x 5 x 7 in 2 groups.
"""

import torch
import torch.nn as nn

batch_size = 64
features = 32
num_groups = 4
dim1 = 384
dim2 = 384

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 2, "features": 4, "num_groups": 2, "dim1": 5, "dim2": 7},
}


class Model(nn.Module):
    def __init__(self, num_features, num_groups):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)
        with torch.no_grad():  # weights away from their defaults, so a kernel that drops them fails
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features, num_groups]
