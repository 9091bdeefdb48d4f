"""``kernelwright optimize`` on attention written out by hand (MinGPT's causal self-attention;
grouped-query attention with repeated key/value heads, a suite task): the plan holds one
attention group instead of two products and a softmax (and the copies repeating the heads), and
the flash kernel is judged correct against the Model by the real harness under Triton's
interpreter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.cli import app

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[2]
GQA_TASK = ROOT / "benchmarks" / "level1" / "43_gqa_attention_repeat_kv.py"

TASK = """import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
heads = 12
seq_len = 1024
head_dim = 64
KERNELWRIGHT = {"small": {"batch_size": 2, "heads": 3, "seq_len": 37, "head_dim": 20}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_dropout = nn.Dropout(0.1)
        causal = torch.tril(torch.ones(seq_len, seq_len))
        self.register_buffer("bias", causal.view(1, 1, seq_len, seq_len))

    def forward(self, q, k, v):
        T = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        return self.attn_dropout(F.softmax(att, dim=-1)) @ v


def get_inputs():
    shape = (batch_size, heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []
"""


@pytest.mark.interpreter
@pytest.mark.slow
def test_optimize_runs_written_out_attention_as_one_verified_flash_kernel(tmp_path: Path) -> None:
    task = tmp_path / "causal_attention.py"
    task.write_text(TASK)
    out = tmp_path / "out"
    args = ["optimize", str(task), "--device", "cpu", "--size", "small", "--trials", "1"]
    args += ["--budget-candidates", "1", "--out", str(out), "--archive", str(tmp_path / "a.db")]
    result = CliRunner().invoke(app, [*args, "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["evaluated"] == 1 and summary["correct"] == 1
    groups = summary["best_design"]["groups"].values()
    assert [g["skill"] for g in groups if g["kind"] == "attention"] == ["attention-flash"]
    assert not any(g["kind"] in ("gemm", "reduction") for g in groups)  # no bmm, no softmax
    report = (out / "report.md").read_text()
    assert "| attention | - | - | scaled_dot_product_attention |" in report
    recognised = "recognised from written-out attention (scale 0.223607, boolean mask)"
    assert recognised in report and recognised in (out / "best.py").read_text()


@pytest.mark.interpreter
@pytest.mark.slow
def test_optimize_reads_repeated_key_value_heads_in_the_flash_kernel(tmp_path: Path) -> None:
    """Grouped-query attention with Hugging Face's repeat_kv: the repeated keys and values are
    never copied out; one flash kernel reads each key/value head for its group of query heads."""
    args = ["optimize", str(GQA_TASK), "--device", "cpu", "--size", "small", "--trials", "1"]
    args += ["--budget-candidates", "1", "--out", str(tmp_path / "out")]
    args += ["--archive", str(tmp_path / "a.db"), "--json", str(tmp_path / "s.json")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["evaluated"] == 1 and summary["correct"] == 1
    groups = list(summary["best_design"]["groups"].values())
    assert [(g["kind"], g["skill"]) for g in groups] == [("attention", "attention-flash")], groups
    best = (tmp_path / "out" / "best.py").read_text()
    assert "attn_0(q, k, " in best and "clone" not in best  # the kernel reads the inputs' heads
