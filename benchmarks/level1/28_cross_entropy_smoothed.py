"""Cross-entropy over 1000 classes with label smoothing 0.1, mean over the batch (a scalar).

    loss_i = (1 - s) * (lse(z_i) - z_i[y_i]) + s * (lse(z_i) - mean_c z_i[c])

Labels are int64 class indices in [0, classes), drawn per seed, valid at every size.

Sizes: 262144 x 1000 fp32 logits (1.05 GB) + 2 MB of labels; one pass over each row is enough
(H200 floor ~0.24 ms); eager (log-softmax written out, then the NLL gather and a separate
smoothing sum over the log-probabilities) estimated at ~1-1.3 ms. Small: 37 x 10.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 262144
classes = 1000
smoothing = 0.1

KERNELWRIGHT = {"family": "loss", "small": {"batch_size": 37, "classes": 10}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, labels):
        return F.cross_entropy(logits, labels, label_smoothing=smoothing)


def get_inputs():
    logits = torch.randn(batch_size, classes)
    labels = torch.randint(0, classes, (batch_size,))
    return [logits, labels]


def get_init_inputs():
    return []
