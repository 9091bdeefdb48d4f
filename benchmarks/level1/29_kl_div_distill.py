"""KL divergence KL(target || softmax(student)) per sample, the distillation loss (a scalar).

    loss = sum_{i,c} t[i,c] * (log t[i,c] - log_softmax(z)[i,c]) / batch     ("batchmean")

The target is a probability distribution over each row, made so explicitly: softmax of
N(0, 1) / 0.7 (a teacher with temperature), so every entry is in (0, 1) and rows sum to 1. The
harness's trial transforms leave tensors in [0, 1] alone, so the target stays a distribution;
the student logits are signed and get every transform.

Sizes: 65536 x 2048 fp32 for each input (1.07 GB in); a fused kernel reads both once per row
(H200 floor ~0.25 ms); eager (log-softmax, log, subtract, multiply, sum) estimated at ~1.5-2 ms.
Small: 37 x 100.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 65536
classes = 2048

KERNELWRIGHT = {"family": "loss", "small": {"batch_size": 37, "classes": 100}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, student_logits, target_probs):
        log_q = F.log_softmax(student_logits, dim=-1)
        return F.kl_div(log_q, target_probs, reduction="batchmean")


def get_inputs():
    student = torch.randn(batch_size, classes)
    target = torch.softmax(torch.randn(batch_size, classes) / 0.7, dim=-1)
    return [student, target]


def get_init_inputs():
    return []
