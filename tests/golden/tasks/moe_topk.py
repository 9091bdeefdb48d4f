import torch
import torch.nn as nn

tokens = 4096
experts = 128


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
    return [torch.randn(tokens, experts)]


def get_init_inputs():
    return [8]
