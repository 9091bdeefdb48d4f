"""Triton's interpreter set up for the CPU: how kernels run where there is no GPU.

Three settings, made in each process that runs kernels under the interpreter (the candidate
processes of a CPU evaluation, the tests' interpreter workers):

- ``triton.autotune`` kernels run their first configuration: the interpreter has no driver to
  benchmark configurations with (and its times would say nothing about a GPU anyway).
- A reduction whose combine function is one of kernelwright's own
  (``design.kernel.expr.HELPERS``) runs over whole blocks. The interpreter reduces with
  Triton's own combine functions in NumPy but with any other one element by element in Python,
  about 0.1 ms an element: a softmax of 13 rows of 300 took 2.2 s a call that way, 0.04 s this
  way. The NaN-propagating max and min and the product run as NumPy's ``max``, ``min`` and
  ``prod`` (which propagate NaN alike); Welford's merge runs its combine function over the
  whole block as a pairwise tree, the order a GPU's reduction merges in (log2 of the axis's
  length calls; the interpreter's own is a left fold, a call an element). The interpreter
  executes a jitted function's source text (it re-parses what ``inspect.getsource``
  returns), so a function is recognised by that text and by reading Triton's own ``tl``: a
  function of the same name with other code, a candidate's included, runs as written.
- No integer overflow checks that cannot report. With ``sanitize_overflow`` on (its default)
  the interpreter computes every 32-bit integer add, subtract and multiply a second time in 64
  bits, compares it with the range and hands the result to ``device_assert``, which reports only
  with ``debug`` on, an option the interpreter never sets: the work is dropped (a compiled
  kernel's check is removed as dead code the same way). Switched off only while ``debug`` is off;
  about 40% of a small implicit-GEMM convolution's interpreted time.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import textwrap
from typing import Any

# combine function -> the NumPy reduction that computes the same over an axis ("fold": the
# combine function itself, as a pairwise tree over whole blocks)
_NUMPY_REDUCTIONS = {"_max_combine": "max", "_min_combine": "min", "_prod_combine": "prod",
                     "_welford_combine": "fold"}


def prepare_interpreter() -> None:
    """Both settings above; safe to call more than once, and a no-op where Triton is missing
    or its interpreter has other internals."""
    _autotune_runs_the_first_configuration()
    _reduce_in_numpy()
    _no_unreported_overflow_checks()


def _autotune_runs_the_first_configuration() -> None:
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        return

    def tie(kernel_call: Any, quantiles: Any = None) -> Any:
        return [0.0] * len(quantiles) if quantiles else 0.0

    def benchmarker(self: Any) -> Any:
        return self._do_bench or tie

    Autotuner.do_bench = property(benchmarker)  # type: ignore[assignment,method-assign]


def _reduce_in_numpy() -> None:
    try:
        import numpy as np
        import triton.language as tl
        from triton.runtime import interpreter
    except ImportError:
        return
    ops = getattr(interpreter, "ReduceOps", None)
    if ops is None or not (hasattr(ops, "apply_impl") and hasattr(ops, "min_max")):
        return
    if getattr(ops.apply_impl, "_kernelwright", False):  # set up already
        return
    by_function: dict[Any, str | None] = {}

    def known(combine_fn: Any) -> str | None:
        fn = getattr(combine_fn, "fn", None)
        if fn is None:
            return None
        if fn not in by_function:
            # the name first: Triton's own combine functions and a hand-written kernel's never
            # load kernelwright's design package (a third of a second a process)
            ours = getattr(fn, "__name__", "") in _NUMPY_REDUCTIONS
            genuine_tl = getattr(fn, "__globals__", {}).get("tl") is tl
            name = _known_sources().get(_source(fn)) if ours and genuine_tl else None
            by_function[fn] = _NUMPY_REDUCTIONS[name] if name else None
        return by_function[fn]

    slow = ops.apply_impl

    def apply_impl(self: Any, input: Any) -> Any:
        how = known(self.combine_fn)
        if how == "fold" and self.axis is not None and _halves(input[0].shape[self.axis]):
            return _fold(self, input, np)
        if how is None or how == "fold" or len(input) != 1:
            return slow(self, input)
        return self.min_max(input[0], val_reduce_op=getattr(np, how))

    apply_impl._kernelwright = True  # type: ignore[attr-defined]
    ops.apply_impl = apply_impl


def _no_unreported_overflow_checks() -> None:
    try:
        from triton.runtime import interpreter
    except ImportError:
        return
    builder: Any = getattr(interpreter, "interpreter_builder", None)
    options: Any = getattr(builder, "options", None)
    # another Triton's internals (no such dataclass of options): left as they are
    names = getattr(type(options), "__dataclass_fields__", {}).keys()
    if {"debug", "sanitize_overflow"} <= names and options.sanitize_overflow and not options.debug:
        builder.options = dataclasses.replace(options, sanitize_overflow=False)


def _halves(length: Any) -> bool:
    """A block length that halves down to 1 (Triton's blocks are powers of two)."""
    n = int(length)
    return n > 0 and n & (n - 1) == 0


def _fold(ops: Any, input: Any, np: Any) -> list[Any]:
    """The combine function over ``ops.axis`` (a power-of-two length) as a pairwise tree, as a
    GPU's reduction merges: neighbours (0, 1), (2, 3)... merged at once over the whole block,
    each result stored in the input's dtype; log2 of the length calls rather than one an
    element."""
    axis = ops.axis
    dtypes = [t.dtype for t in input]
    level = [t.handle.data for t in input]
    while level[0].shape[axis] > 1:
        pairs = range(0, level[0].shape[axis], 2)
        first = [ops.to_tensor(np.take(d, pairs, axis=axis), dt)
                 for d, dt in zip(level, dtypes, strict=True)]
        second = [ops.to_tensor(np.take(d, [i + 1 for i in pairs], axis=axis), dt)
                  for d, dt in zip(level, dtypes, strict=True)]
        out = ops.combine_fn.fn(*first, *second)
        out = out if isinstance(out, tuple) else (out,)
        level = [np.asarray(o.handle.data, dtype=d.dtype) for o, d in zip(out, level, strict=True)]
    kept = [d if ops.keep_dims else np.take(d, 0, axis=axis) for d in level]
    return [ops.to_tensor(d, dt) for d, dt in zip(kept, dtypes, strict=True)]


@functools.cache
def _known_sources() -> dict[str, str]:
    """The source text of each combine function NumPy stands in for, from its ``def`` line on
    (the part the interpreter parses), to its name."""
    from kernelwright.design.kernel.expr import HELPERS

    out: dict[str, str] = {}
    for name in _NUMPY_REDUCTIONS:
        text = HELPERS[name]
        out[_from_def(text)] = name
    return out


def _source(fn: Any) -> str:
    try:
        return _from_def(textwrap.dedent("".join(inspect.getsourcelines(fn)[0])))
    except (OSError, TypeError):
        return ""


def _from_def(text: str) -> str:
    lines = text.strip("\n").splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("def "):
            return "\n".join(lines[i:]).rstrip()
    return ""
