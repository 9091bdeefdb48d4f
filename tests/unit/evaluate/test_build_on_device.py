"""Where a task's models are built: the CPU as KernelBench does, or the device for huge ones."""

from __future__ import annotations

import torch
import torch.nn as nn

from kernelwright.evaluate import runs
from kernelwright.evaluate.runs import build_model, builds_on_device
from kernelwright.records import Precision


class Wide(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


class NeedsRealValues(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = float(torch.ones(1).item())  # meta tensors have no value to read


def test_only_models_past_the_threshold_on_a_gpu_are_built_there(monkeypatch):
    monkeypatch.setattr(runs, "ON_DEVICE_ELEMENTS", 64 * 64 + 64)
    assert builds_on_device(Wide, [64], "cuda")
    assert not builds_on_device(Wide, [63], "cuda")
    assert not builds_on_device(Wide, [64], "cpu")  # the CPU builds on the CPU whatever the size


def test_the_count_allocates_nothing_for_a_model_too_large_to_build():
    # 2^20 x 2^20 weights would be 4 TiB: counted on the meta device, never allocated
    assert builds_on_device(Wide, [1 << 20], "cuda")


def test_a_model_that_cannot_be_built_on_the_meta_device_is_built_as_kernelbench_does():
    assert not builds_on_device(NeedsRealValues, [], "cuda")


def test_one_seed_gives_one_set_of_weights_whichever_way_both_sides_build():
    a = build_model(Wide, [16], 7, "cpu", Precision.FP32, on_device=True)
    b = build_model(Wide, [16], 7, "cpu", Precision.FP32, on_device=True)
    c = build_model(Wide, [16], 7, "cpu", Precision.FP32)
    assert torch.equal(a.fc.weight, b.fc.weight) and torch.equal(a.fc.weight, c.fc.weight)
