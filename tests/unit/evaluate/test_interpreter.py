"""evaluate.interpreter: under Triton's interpreter kernelwright's own NaN-propagating max and
min and its product reduce in NumPy, with the same values (NaN included); a combine function of
the same name with other code (a candidate's own) runs as written."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernelwright.design.kernel.expr import HELPERS

pytest.importorskip("triton")

SCRIPT = '''
import sys
import torch
import triton
import triton.language as tl
from triton.runtime import interpreter

from kernelwright.evaluate.interpreter import prepare_interpreter

prepare_interpreter()
prepare_interpreter()  # twice: set up once

{helpers}

import imposter  # its _max_combine returns its first operand


@triton.jit
def reduce_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, OP: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if OP == 0:
        v = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
        r = tl.reduce(v, 0, _max_combine)
    elif OP == 1:
        v = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("inf"))
        r = tl.reduce(v, 0, _min_combine)
    elif OP == 2:
        v = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=1.0)
        r = tl.reduce(v, 0, _prod_combine)
    else:
        v = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
        r = tl.reduce(v, 0, imposter._max_combine)
    tl.store(out_ptr + row, r)


python_reductions = []
slow = interpreter.ReduceOps.generic_reduce


def counting(self, input):
    python_reductions.append(self.combine_fn.fn.__module__ + "." + self.combine_fn.fn.__name__)
    return slow(self, input)


interpreter.ReduceOps.generic_reduce = counting
x = torch.rand(5, 37) + 0.5
x[1, 3] = float("nan")
x[2, 0] = float("inf")
x[3, :] = -float("inf")
expected = [x.amax(1), x.amin(1), x.prod(1), x[:, 0]]
for op, want in enumerate(expected):
    out = torch.empty(5)
    reduce_rows[(5,)](x, out, 37, BLOCK=64, OP=op)
    ok = torch.allclose(out, want, equal_nan=True, rtol=1e-5)
    print(op, ok, out[1].isnan().item())
print("python:", python_reductions)
'''


def test_own_combines_reduce_in_numpy_with_nan_and_an_imposter_runs_as_written(
        tmp_path: Path) -> None:
    helpers = "\n\n".join(HELPERS[n] for n in ("_max_combine", "_min_combine", "_prod_combine"))
    (tmp_path / "imposter.py").write_text(
        "import triton\n\n\n@triton.jit\ndef _max_combine(a, b):\n    return a\n")
    script = tmp_path / "reduce.py"
    script.write_text(textwrap.dedent(SCRIPT).format(helpers=helpers))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, "-W", "ignore", str(script)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    # max, min and prod: PyTorch's values, NaN propagated; the imposter keeps the first value
    assert lines[:4] == ["0 True True", "1 True True", "2 True True", "3 True False"], lines
    # only the imposter (five rows) went through the interpreter's element-by-element path
    assert lines[4] == "python: " + str(["imposter._max_combine"] * 5), lines


WELFORD = '''
import torch
import triton
import triton.language as tl
from triton.runtime import interpreter

import combines  # kernelwright's Welford merge, from a file (its source is known)
from kernelwright.evaluate.interpreter import prepare_interpreter

prepare_interpreter()
# the same function without a source file: not recognised, so the interpreter's own path
exec(compile({helper!r}, "<no file>", "exec"), globals())


@triton.jit
def merge_rows(m_ptr, q_ptr, n_ptr, out_ptr, KNOWN: tl.constexpr, KEEP: tl.constexpr):
    r = tl.arange(0, 8)[:, None]
    c = tl.arange(0, 16)[None, :]
    m = tl.load(m_ptr + r * 16 + c)
    q = tl.load(q_ptr + r * 16 + c)
    n = tl.load(n_ptr + r * 16 + c)
    if KNOWN:
        mean, m2, count = tl.reduce((m, q, n), 1, combines._welford_combine, keep_dims=KEEP)
    else:
        mean, m2, count = tl.reduce((m, q, n), 1, _welford_combine, keep_dims=KEEP)
    rows = tl.arange(0, 8)[:, None] if KEEP else tl.arange(0, 8)
    tl.store(out_ptr + rows, mean)
    tl.store(out_ptr + 8 + rows, m2)
    tl.store(out_ptr + 16 + rows, count)


@triton.jit
def merge_all(m_ptr, q_ptr, n_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)  # a 1-D block, its tail masked: empty statistics
    mean, m2, count = tl.reduce((tl.load(m_ptr + i, mask=i < N, other=0.0),
                                 tl.load(q_ptr + i, mask=i < N, other=0.0),
                                 tl.load(n_ptr + i, mask=i < N, other=0.0)),
                                0, combines._welford_combine)
    tl.store(out_ptr, mean)
    tl.store(out_ptr + 1, m2)
    tl.store(out_ptr + 2, count)


def exact(m, q, n):
    """Chan's merge of every statistic in a row, in float64."""
    m, q, n = m.double(), q.double(), n.double()
    count = n.sum(-1)
    mean = (m * n).sum(-1) / count.clamp(min=1)
    m2 = q.sum(-1) + (n * (m - mean[..., None]) ** 2).sum(-1)
    return mean, m2, count


python_reductions = []
slow = interpreter.ReduceOps.generic_reduce


def counting(self, input):
    python_reductions.append(self.combine_fn.fn.__module__)
    return slow(self, input)


interpreter.ReduceOps.generic_reduce = counting
torch.manual_seed(0)
m = torch.randn(8, 16) * 100 + 1e4  # a large mean: a wrong merge shows in M2 at once
q = torch.rand(8, 16) * 50
n = torch.randint(0, 3, (8, 16)).float()
n[2] = 0  # a row of empty statistics
m, q = m * (n > 0), q * (n > 0)  # an empty statistic's mean and M2 are 0, as a kernel's are
want = torch.cat(exact(m, q, n)).float()
for keep in (0, 1):
    for known in (0, 1):
        out = torch.empty(24)
        merge_rows[(1,)](m, q, n, out, KNOWN=known, KEEP=keep)
        print(keep, known, torch.allclose(out, want, rtol=5e-5, atol=1e-3))
flat = [t.flatten()[:15].contiguous() for t in (m, q, n)]
out = torch.empty(3)
merge_all[(1,)](*flat, out, N=15, BLOCK=16)
print("1-D", torch.allclose(out, torch.stack(exact(*flat)).float(), rtol=5e-5, atol=1e-3))
print("python:", python_reductions)
'''


def test_welfords_merge_runs_as_a_tree_over_the_block_with_chans_statistics(
        tmp_path: Path) -> None:
    """Kernelwright's Welford merge over the rows of a block, and over a 1-D block with a
    masked tail, gives Chan's merged statistics (float64's, to fp32's rounding; a row of empty
    ones included), as the interpreter's own element-by-element fold of the same function
    (unrecognised: no source file) does; only that one takes the element-by-element path (at
    a mean of 1e4, 1.1e-5 off at most, the tree 4.8e-6)."""
    (tmp_path / "combines.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n" + HELPERS["_welford_combine"] + "\n")
    script = tmp_path / "welford.py"
    script.write_text(textwrap.dedent(WELFORD).format(helper=HELPERS["_welford_combine"]))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, "-W", "ignore", str(script)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == ["0 0 True", "0 1 True", "1 0 True", "1 1 True", "1-D True",
                                        "python: ['__main__', '__main__']"], proc.stdout


OVERFLOW = '''
import dataclasses

import torch
import triton
import triton.language as tl
from triton.runtime import interpreter

from kernelwright.evaluate.interpreter import prepare_interpreter


@triton.jit
def times_four(x_ptr, out_ptr):
    i = tl.arange(0, 4)
    tl.store(out_ptr + i, tl.load(x_ptr + i) * 4)  # 2**30 * 4 overflows int32


def run():
    out = torch.empty(4, dtype=torch.int32)
    times_four[(1,)](x, out)
    return out.tolist()


def set_options(**changes):
    builder = interpreter.interpreter_builder
    builder.options = dataclasses.replace(builder.options, **changes)


x = torch.tensor([1, 2**29, 2**30, -(2**30)], dtype=torch.int32)
print("default", run())
set_options(debug=True)
try:
    run()
except Exception as e:  # the interpreter's error, naming the failed assertion
    print("debug", "int32 overflow detected" in str(e))
prepare_interpreter()
print("prepared with debug", interpreter.interpreter_builder.options.sanitize_overflow)
set_options(debug=False)
prepare_interpreter()
print("prepared", interpreter.interpreter_builder.options.sanitize_overflow, run())
'''


def test_overflow_checks_that_cannot_report_are_skipped(tmp_path: Path) -> None:
    """The interpreter's overflow check reports only with ``debug`` on: by default an
    overflowing product wraps silently, checked or not. Prepared, it is skipped while ``debug``
    is off (same results) and kept while it is on."""
    script = tmp_path / "overflow.py"
    script.write_text(textwrap.dedent(OVERFLOW))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, "-W", "ignore", str(script)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    wrapped = [4, -(2**31), 0, 0]
    assert proc.stdout.splitlines() == [
        f"default {wrapped}", "debug True", "prepared with debug True",
        f"prepared False {wrapped}"], proc.stdout
