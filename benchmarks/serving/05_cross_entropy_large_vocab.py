"""Language-model loss: cross-entropy over a 128256-token vocabulary (Llama 3), mean over the
tokens that have a label.

Logits are (batch * seq_len, vocab); labels are int64 token ids, with the last position of every
sequence set to ignore_index (-100, no next token), so the mean runs over batch * (seq_len - 1)
tokens: a kernel must skip ignored rows in both the sum and the count.

Sizes: 2 x 1024 tokens x 128256 fp32 logits = 1.05 GB in (16 KB of labels), 4 B out. A row is
513 KB, far more than a block holds, so a kernel streams it with an online max/sum. H200 floor
~0.24 ms; eager (a log-softmax written out in full, then the NLL gather) estimated at
~0.7-1 ms. Small: 2 x 19 tokens x 517-word vocabulary.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 1024
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
