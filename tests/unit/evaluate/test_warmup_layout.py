"""Warm-up inputs are laid out like the checked calls' inputs: Triton compiles a kernel per class
of strides and alignments, and a class first met after the seal would need a compiler process."""

from __future__ import annotations

import torch
import torch.nn as nn

from kernelwright.evaluate.referee import _layout
from kernelwright.evaluate.reference import Reference, RunSpec
from kernelwright.evaluate.request import JudgeRequest
from kernelwright.records import Precision


def _inputs() -> list[object]:
    return [
        torch.randn(40, 24).t(),  # transposed: unit stride along the first dimension
        torch.randn(24, 41)[:, 3:],  # a slice: storage offset 3, rows 41 apart
        torch.randn(1, 5).expand(4, 5),  # broadcast: stride 0
        torch.arange(6),  # integers keep their values
        2.5,
    ]


def _reference() -> Reference:
    precision = Precision.FP32
    req = JudgeRequest(task_path="t.py", size="small", device="cpu", precision=precision,
                       tolerance=precision.default_tolerance, seed=1, trials=1,
                       distributions=False, cache_dir=None, secret="s")
    ref = Reference(req, nn.Identity, _inputs, [])
    ref.runs.append(RunSpec("trial", "trial 1 (task)", 1))
    return ref


def test_warm_up_inputs_keep_every_inputs_layout_with_new_values() -> None:
    ref = _reference()
    checked, warm = ref.inputs(0), ref.warmup_inputs(0)
    assert [_layout(w) for w in warm[:4]] == [_layout(c) for c in checked[:4]]
    assert _layout(warm[0])[2] == (1, 24) and _layout(warm[1])[3] == 3
    for c, w in zip(checked[:3], warm[:3], strict=True):
        assert not torch.equal(c, w)  # floating values are redrawn
    assert torch.equal(checked[3], warm[3]) and warm[4] == 2.5
