"""Language-model loss: cross-entropy over a 128256-token vocabulary (Llama 3), mean over the
tokens that have a label.

Logits are (batch * seq_len, vocab); labels are int64 token ids, with the last position of every
sequence set to ignore_index (-100, no next token), so the mean runs over batch * (seq_len - 1)
tokens: a kernel must skip ignored rows in both the sum and the count.

Sizes: 2560x128256 logits and 2560 int64 labels, 1.31 GB in per call (H200 floor ~0.31 ms at
4.3 TB/s); `seq_len` was raised from 1024 to 1280 after a measured H200 sweep so that eager fp32
takes about 1 ms or more (BENCHMARKS.md). Small: 2 x 19 tokens x 517-word vocabulary.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 1280
vocab = 128256
ignore_index = -100

KERNELWRIGHT = {
    "family": "serving",
    "notes": "large-vocabulary cross-entropy (loss)",
    "small": {"batch_size": 2, "seq_len": 19, "vocab": 517},
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, labels):
        return F.cross_entropy(logits, labels, ignore_index=ignore_index)


def get_inputs():
    logits = torch.randn(batch_size * seq_len, vocab)
    labels = torch.randint(0, vocab, (batch_size, seq_len))
    labels[:, -1] = ignore_index
    return [logits, labels.reshape(-1)]


def get_init_inputs():
    return []
