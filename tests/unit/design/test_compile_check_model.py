"""compile_check runs a ModelNew on the meta device; one whose __init__ reads a value (a
drop-path schedule's ``.item()``, as in KernelBench's Swin models) is built on the CPU and moved."""

from __future__ import annotations

import torch
import torch.nn as nn

from kernelwright.design.compile_check import _meta_model


class ReadsAValue(nn.Module):
    def __init__(self, depth: int) -> None:
        super().__init__()
        rates = [x.item() for x in torch.linspace(0, 0.1, depth)]  # fails on meta tensors
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in rates)


def test_a_model_that_reads_a_value_in_init_is_built_on_the_cpu_then_moved() -> None:
    with torch.device("meta"):
        model = _meta_model(ReadsAValue, [3])
        assert len(model.layers) == 3
        assert all(p.device.type == "meta" for p in model.parameters())
        plain = _meta_model(nn.Linear, [8, 8])  # built on meta directly
        assert plain.weight.device.type == "meta"
