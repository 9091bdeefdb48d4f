"""BatchNorm2d at inference: y = (x - running_mean) / sqrt(running_var + eps) * weight + bias.

The harness runs models in eval mode, so the running statistics are used. They are drawn at
random at construction (PyTorch starts them at 0 and 1, which would make the layer nearly the
identity): running_var in [0.5, 2], running_mean ~ N(0, 0.5), weight in [0.5, 1.5].

Sizes: 80x96x224x224 inputs, 3.08 GB in and out per call (H200 floor ~0.72 ms at 4.3 TB/s);
`batch_size` was scaled 2.5x after a measured H200 sweep so that eager fp32 takes about 1 ms or
more (BENCHMARKS.md).
Small: 3 x 5 x 7 x 9.
"""

import torch
import torch.nn as nn

batch_size = 80
channels = 96
height = 224
width = 224

KERNELWRIGHT = {
    "family": "norm",
    "small": {"batch_size": 3, "channels": 5, "height": 7, "width": 9},
}


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.norm.running_mean.normal_(0.0, 0.5)
            self.norm.running_var.uniform_(0.5, 2.0)
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
