"""A depthwise 3x3 convolution, batch norm and ReLU6 (a MobileNet block's first half): one direct
kernel with its epilogue."""

import torch
import torch.nn as nn

batch_size = 10
channels = 96
height = width = 112


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, stride=2, padding=1, groups=channels,
                              bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.act = nn.ReLU6()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []
