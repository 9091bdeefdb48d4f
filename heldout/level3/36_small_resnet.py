"""A small ResNet for 96 x 96 images: a 3 x 3 stem, a residual block, a downsampling residual
block with a 1 x 1 projection shortcut, global average pooling and a linear classifier; every
convolution followed by an inference BatchNorm (running statistics, learned affine).

Seven convolutions (3 -> 64, four 64 -> 64 or 64 -> 128 3 x 3, 128 -> 128, a 1 x 1 stride-2
projection), two residual adds, ReLUs, a pool over 48 x 48 positions and a 128 -> 10 product.

Sizes: 32 images of 3 x 96 x 96: about 78 GFLOP, 3.5 MB in, 1.2 MB of weights; the largest
activation 75 MB. Compute-bound at fp32; eager estimated ~2-3 ms.
Small: 2 images of 3 x 10 x 10, 8 -> 16 channels.
"""

import torch
import torch.nn as nn

batch = 32
size = 96
width = 64
classes = 10

KERNELWRIGHT = {"family": "block", "small": {"batch": 2, "size": 10, "width": 8}}


def _bn(channels):
    bn = nn.BatchNorm2d(channels)
    with torch.no_grad():  # not PyTorch's identity defaults: a kernel that drops them fails
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.2, 0.2)
        bn.running_mean.uniform_(-0.1, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
    return bn


class Model(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        w2 = 2 * width
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), _bn(width),
                                  nn.ReLU())
        self.a1 = nn.Sequential(nn.Conv2d(width, width, 3, padding=1, bias=False), _bn(width),
                                nn.ReLU(), nn.Conv2d(width, width, 3, padding=1, bias=False),
                                _bn(width))
        self.b1 = nn.Sequential(nn.Conv2d(width, w2, 3, stride=2, padding=1, bias=False),
                                _bn(w2), nn.ReLU(), nn.Conv2d(w2, w2, 3, padding=1, bias=False),
                                _bn(w2))
        self.shortcut = nn.Sequential(nn.Conv2d(width, w2, 1, stride=2, bias=False), _bn(w2))
        self.head = nn.Linear(w2, classes)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.a1(x))
        x = torch.relu(self.shortcut(x) + self.b1(x))
        return self.head(x.mean(dim=(2, 3)))


def get_inputs():
    return [torch.randn(batch, 3, size, size)]


def get_init_inputs():
    return [width, classes]
