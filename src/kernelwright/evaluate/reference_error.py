"""How far the fp32 reference is from the exact answer, measured against a float64 run. Judge only.

Under the fp32 policy the judge runs each trial's reference twice: in float32 (the expected
outputs) and again, with the same weights (same seed) and the same inputs, in float64 (a
stand-in for the exact answer). Per floating output:

    ref_error = max |out_fp32 - out_fp64|     over the elements finite in both

A float32 sum over thousands of terms depends on its order by about that much wherever a
running sum crosses zero, so an honest candidate that sums in another order (a blocked scan, a
split-K matmul) misses the reference's elements by about ``ref_error``;
:mod:`~kernelwright.evaluate.correctness` widens ``atol`` to a multiple of it.

Nothing here may loosen a check by accident: whatever goes wrong (an operator without a float64
kernel, out of memory, a forward that returns other shapes or a less precise dtype, an error too
large to be rounding) gives None, and None means the strict tolerance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernelwright.evaluate.runs import as_output_list, build_model
from kernelwright.records import Precision

# A float32 result that misses float64's by 1% of its largest magnitude has not been rounded
# differently: the float64 run computed something else (random draws in the forward, a branch on
# the dtype), so its difference says nothing about rounding and must not widen anything. Rounding
# alone can come close to 0.1%, not 1%: a softmax turns a score's absolute error into a relative
# error of its weight, and on inputs scaled by 64 (the harness's scaled trial) PyTorch's own fp32
# attention missed float64 by 0.1% of the largest output on the H200 (0.31 of about 300).
MAX_RELATIVE_REF_ERROR = 1e-2

# Elements per step of the float64 difference: full-size outputs have 10^8 elements, and one
# float64 temporary of that size is a gigabyte more on a device that already holds the task.
_CHUNK = 1 << 24


def measure_ref_errors(
    model_cls: Any,
    init_inputs: list[Any],
    seed: int,
    inputs: list[Any],
    outputs: list[Any],
    device: str,
    model: Any = None,
    on_device: bool = False,
) -> tuple[list[float | None] | None, str, list[Any] | None]:
    """Per output of the fp32 reference ``outputs``: its error against a float64 run.

    ``inputs`` are the pristine inputs of the run (left untouched); ``model``, when given, is a
    model of ``seed`` in fp32 that has not run yet (converted in place, not copied), or one
    already in float64 (used as it is). Returns the errors
    (None for non-floating outputs and for any output that could not be measured), an empty
    reason and the float64 outputs; when the float64 run failed as a whole, None, the reason and
    None. ``on_device``: how the task's models are built (``runs.build_model``).
    """
    try:
        exact = float64_outputs(model_cls, init_inputs, seed, inputs, device, model, on_device)
        if len(exact) != len(outputs):
            return (None, f"the float64 run returned {len(exact)} output(s), not {len(outputs)}",
                    None)
        return [_output_error(o, e) for o, e in zip(outputs, exact, strict=True)], "", exact
    except Exception as exc:  # any failure only means: no widening
        return None, f"{type(exc).__name__}: {exc}"[:300], None


def pooled_ref_errors(errors: Sequence[list[float | None] | None]) -> list[float | None] | None:
    """Per output index, the largest error over several runs; None where any run lacks one.

    For outputs whose inputs were not themselves run in float64 (the timing sets): the runs
    pooled are draws from the same distribution, and an unmeasured run leaves no widening.
    """
    if not errors or any(e is None for e in errors):
        return None
    known = [e for e in errors if e is not None]
    if len({len(e) for e in known}) != 1:
        return None
    pooled: list[float | None] = []
    for column in zip(*known, strict=True):
        values = [v for v in column if v is not None]
        pooled.append(max(values) if len(values) == len(column) else None)
    return pooled


def float64_outputs(
    model_cls: Any, init_inputs: list[Any], seed: int, inputs: list[Any], device: str,
    model: Any = None,
    on_device: bool = False,
) -> list[Any]:
    """The reference's outputs run in float64 (same weights and inputs; ``model`` and
    ``on_device``: see :func:`measure_ref_errors`)."""
    import torch

    if model is None:
        model = build_model(model_cls, init_inputs, seed, device, Precision.FP32, on_device)
    model = model.double()
    args = [_float64_copy(v, device) for v in inputs]
    with torch.no_grad():
        outputs = as_output_list(model(*args), strict=False)
    return [o.detach() for o in outputs]


def _float64_copy(value: Any, device: str) -> Any:
    """A copy on ``device``: floating tensors in float64 (exact from float32), others as they
    are. Always a copy, so a forward that writes into its inputs leaves the pristine ones alone."""
    import torch

    if isinstance(value, torch.Tensor):
        dtype = torch.float64 if value.is_floating_point() else value.dtype
        return value.to(device=device, dtype=dtype, copy=True)
    if isinstance(value, list | tuple):
        return type(value)(_float64_copy(v, device) for v in value)
    return value


def _output_error(out: Any, exact: Any) -> float | None:
    import torch

    if not (out.is_floating_point() and exact.is_floating_point()):
        return None
    if tuple(exact.shape) != tuple(out.shape):
        return None
    if torch.finfo(exact.dtype).eps > torch.finfo(out.dtype).eps:
        return None  # a forward that drops to half precision measures nothing about float32
    error, scale = _max_abs_diff(out, exact.to(out.device))
    if error > MAX_RELATIVE_REF_ERROR * scale:
        return None
    return error


def _max_abs_diff(out: Any, exact: Any) -> tuple[float, float]:
    """``max |out - exact|`` and ``max |exact|`` over the elements finite in both, in float64."""
    import torch

    a, b = out.reshape(-1), exact.reshape(-1)
    rows = []  # per chunk, on the device until one read-back (no idle device between chunks)
    for start in range(0, a.numel(), _CHUNK):
        x = a[start : start + _CHUNK]
        y = b[start : start + _CHUNK].double()  # x - y is then computed in float64
        finite = torch.isfinite(x) & torch.isfinite(y)
        rows.append(torch.stack([torch.where(finite, (x - y).abs(), 0.0).max(),
                                 torch.where(finite, y.abs(), 0.0).max()]))
    per_chunk = torch.stack(rows).tolist() if rows else []
    return (max((row[0] for row in per_chunk), default=0.0),
            max((row[1] for row in per_chunk), default=0.0))
