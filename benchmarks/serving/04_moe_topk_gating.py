"""Mixture-of-experts routing: softmax over 128 expert logits per token, top-8, renormalise.

    p = softmax(logits);  (w, ids) = topk(p, 8);  w = w / sum(w)      returns (w, ids as int32)

The kernel vLLM calls topk_softmax. The expert ids are compared exactly, so the inputs are built
so that no two logits of a token are close: each token's logits are a random permutation of
{-64, ..., 63} * 0.05, plus jitter below a quarter of that gap. Rankings are then unambiguous in
fp32 and still after rounding to bf16 (gap 0.0375 > twice bf16's spacing of 0.0156 below 4).
The harness's trial transforms would break that spacing (heavy-tailed multiplies each logit by
a random factor; shifted moves logits where bf16 spacing exceeds the gap), so they are turned
off here ("input_distributions": False): every trial is a fresh draw of this distribution.
Building the permutations sorts 128 values per token (about a second per input set at full
size on a 16-core host).

Sizes: 1782576x128 inputs, 1.03 GB in and out per call (H200 floor ~0.24 ms at 4.3 TB/s);
`num_tokens` was scaled 1.7x after a measured H200 sweep so that eager fp32 takes about 1 ms or
more (BENCHMARKS.md). Small: 37 tokens x 20 experts, top 3.
"""

import torch
import torch.nn as nn

num_tokens = 1782576
num_experts = 128
top_k = 8
logit_gap = 0.05

KERNELWRIGHT = {
    "family": "serving",
    "notes": "MoE top-k gating softmax (softmax, selection)",
    "input_distributions": False,
    "small": {"num_tokens": 37, "num_experts": 20, "top_k": 3},
}


class Model(nn.Module):
    def __init__(self, top_k):
        super().__init__()
        self.top_k = top_k

    def forward(self, router_logits):
        probs = torch.softmax(router_logits, dim=-1)
        weights, ids = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights, ids.to(torch.int32)


def get_inputs():
    ranks = torch.rand(num_tokens, num_experts).argsort(dim=-1).float()
    jitter = torch.rand(num_tokens, num_experts) * (logit_gap / 4)
    return [(ranks - num_experts // 2) * logit_gap + jitter]


def get_init_inputs():
    return [top_k]
