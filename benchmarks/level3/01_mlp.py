"""Three-layer MLP classifier: Linear-GELU-Linear-GELU-Linear, 1024 -> 4096 -> 4096 -> 1000.

Sizes: batch 4096: 205 GFLOP over three GEMMs, 17 MB in, 101 MB of weights, 16 MB out. At fp32
the products dominate (~4.1 ms at 50 TFLOP/s); eager adds two GELU passes over 67 MB
activations, estimated ~4.2 ms. The output width 1000 is not a multiple of a tile.
Small: batch 37, 20 -> 45 -> 45 -> 10.
"""

import torch
import torch.nn as nn

batch_size = 4096
in_features = 1024
hidden = 4096
classes = 1000

KERNELWRIGHT = {
    "family": "block",
    "small": {"batch_size": 37, "in_features": 20, "hidden": 45, "classes": 10},
}


class Model(nn.Module):
    def __init__(self, in_features, hidden, classes):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.GELU(),
            nn.Linear(hidden, hidden),
            nn.GELU(),
            nn.Linear(hidden, classes),
        )

    def forward(self, x):
        return self.layers(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden, classes]
