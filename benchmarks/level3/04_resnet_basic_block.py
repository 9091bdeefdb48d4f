"""ResNet basic block at inference: conv3x3-BN-ReLU-conv3x3-BN, identity shortcut, ReLU.

BatchNorm uses running statistics drawn at random at construction (so neither norm is the
identity); both fold into per-channel scale and shift at inference.

Sizes: batch 128, 64 channels at 56 x 56 (ResNet-18/34 stage 1), 103 MB per activation:
2 x 29.6 GFLOP. At fp32 (cuDNN assumed ~35 TFLOP/s) the convolutions take ~1.7 ms; eager adds
about five passes over 103 MB tensors, estimated ~2 ms. Small: batch 2, 5 channels, 9 x 11.
"""

import torch
import torch.nn as nn

batch_size = 128
channels = 64
height = 56
width = 56

KERNELWRIGHT = {
    "family": "block",
    "small": {"batch_size": 2, "channels": 5, "height": 9, "width": 11},
}


def _random_bn(channels):
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():
        bn.running_mean.normal_(0.0, 0.2)
        bn.running_var.uniform_(0.2, 1.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.1)
    return bn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = _random_bn(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = _random_bn(channels)

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
