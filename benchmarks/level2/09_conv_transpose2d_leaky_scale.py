"""2-D transposed convolution (x2 upsampling), LeakyReLU, per-channel scale.

    y = leaky_relu(conv_transpose2d(x, W, b, stride 2, kernel 4, padding 1), 0.2) * gamma[c]

Epilogue (3 ops): bias, LeakyReLU (slope 0.2), a learned per-channel scale: the upsampling step
of a GAN generator or decoder. Each output pixel gathers from a 2 x 2 set of input pixels, a
different loop structure from a forward convolution.

Sizes: 32 x 128 x 96 x 96 in (151 MB), 64 channels at 192 x 192 out (302 MB): 77 GFLOP.
Compute-bound at fp32 (~2.2 ms at an assumed 35 TFLOP/s); eager adds two passes over the
output, estimated ~2.5 ms (cuDNN's transposed kernels are often slower than that).
Small: 2 x 5 x 7 x 9 in, 3 output channels.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 64
height = 96
width = 96

KERNELWRIGHT = {
    "family": "conv_epilogue",
    "small": {"batch_size": 2, "in_channels": 5, "out_channels": 3, "height": 7, "width": 9},
}


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)
        self.gamma = nn.Parameter(torch.rand(out_channels, 1, 1) + 0.5)

    def forward(self, x):
        return F.leaky_relu(self.up(x), negative_slope=0.2) * self.gamma


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
