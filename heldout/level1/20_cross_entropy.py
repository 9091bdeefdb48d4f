"""Cross-entropy over 4000 classes, mean over the batch, no smoothing (held-out task).

Written 2026-12-01. Labels are int64 class indices in [0, classes).

Sizes: 65536 x 4000 fp32 logits (1.05 GB) + 0.5 MB of labels (H200 floor ~0.24 ms).
Small: 37 x 10.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 65536
classes = 4000

KERNELWRIGHT = {"family": "loss", "small": {"batch_size": 37, "classes": 10}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, labels):
        return F.cross_entropy(logits, labels)


def get_inputs():
    logits = torch.randn(batch_size, classes)
    labels = torch.randint(0, classes, (batch_size,))
    return [logits, labels]


def get_init_inputs():
    return []
