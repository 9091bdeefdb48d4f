"""Timing a forward pass: CUDA events with the L2 flushed, rotated input sets, a wall-clock check.

On CUDA (the numbers that count):

    1. warm up (compilation, autotuning and allocator growth stay out of the numbers);
    2. pick the run count from one synchronised estimate (about ``target_ms`` of work in total);
    3. time each run between two CUDA events, with a write over a buffer larger than the L2
       before each run, rotating through the input sets; no host synchronisation between runs,
       so the CPU's launch overhead hides behind the flush as it would in a real pipeline;
    4. cross-check: a few runs timed with host synchronisation before and after (wall) and the
       host time of the call alone (launch). Work that the events miss (a side stream, a
       background thread) shows up as wall time far beyond events + launch.

The samples go back raw; statistics are computed by the parent (:func:`summarise`), outside the
candidate's process. On the CPU the same procedure runs with a wall clock and its numbers are
labelled not representative.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernelwright.records import TimingStats

# Bound to this module when it is imported, before any candidate runs: rebinding
# time.perf_counter later does not reach these names (the guard also checks the originals).
_perf_counter = time.perf_counter

L2_FLUSH_BYTES = 256 * 1024 * 1024


@dataclass(slots=True)
class RawTiming:
    """Raw samples of one timed callable (milliseconds)."""

    samples_ms: list[float]
    wall_ms: list[float] = field(default_factory=list)
    launch_ms: list[float] = field(default_factory=list)
    method: str = ""
    last_outputs: list[Any] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (outputs are not included)."""
        return {
            "samples_ms": self.samples_ms,
            "wall_ms": self.wall_ms,
            "launch_ms": self.launch_ms,
            "method": self.method,
        }


def time_forward(
    fn: Callable[..., Any],
    arg_sets: Sequence[Sequence[Any]],
    device: str,
    *,
    target_ms: float = 300.0,
    min_runs: int = 10,
    max_runs: int = 400,
    keep_outputs: bool = False,
    sync: Callable[[], None] | None = None,
) -> RawTiming:
    """Time ``fn(*args)`` rotating over ``arg_sets``; see the module docstring.

    With ``keep_outputs`` the outputs of the last round (one per input set, cloned right after
    their run, outside the timed window) come back in ``last_outputs``, for spot checks.
    """
    if device == "cuda":
        return _time_cuda(fn, arg_sets, target_ms, min_runs, max_runs, keep_outputs)
    return _time_cpu(fn, arg_sets, target_ms, keep_outputs)


def _time_cuda(
    fn: Callable[..., Any],
    arg_sets: Sequence[Sequence[Any]],
    target_ms: float,
    min_runs: int,
    max_runs: int,
    keep_outputs: bool,
) -> RawTiming:
    import torch

    cuda_sync = torch.cuda.synchronize
    event = torch.cuda.Event
    flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    k = len(arg_sets)
    # Warm-up: at least one call per input set and about 25 ms of work.
    t0 = _perf_counter()
    calls = 0
    while calls < max(k, 3) or (_perf_counter() - t0) * 1e3 < 25 and calls < 100:
        fn(*arg_sets[calls % k])
        calls += 1
        cuda_sync()
    # Estimate one run, flush included, to size the loop.
    cuda_sync()
    t0 = _perf_counter()
    for i in range(k):
        flush.zero_()
        fn(*arg_sets[i])
    cuda_sync()
    per_run = max((_perf_counter() - t0) * 1e3 / k, 1e-3)
    n_runs = int(min(max_runs, max(min_runs, target_ms / per_run)))
    n_runs = max(k, (n_runs + k - 1) // k * k)  # whole rounds over the input sets
    starts = [event(enable_timing=True) for _ in range(n_runs)]
    ends = [event(enable_timing=True) for _ in range(n_runs)]
    last: list[Any] = [None] * k
    for i in range(n_runs):
        args = arg_sets[i % k]
        flush.zero_()
        starts[i].record()
        out = fn(*args)
        ends[i].record()
        if keep_outputs and i >= n_runs - k:
            last[i % k] = _clone_outputs(out)
    cuda_sync()
    samples = [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]
    wall, launch = [], []
    for i in range(min(10, n_runs)):
        args = arg_sets[i % k]
        flush.zero_()
        cuda_sync()
        t0 = _perf_counter()
        fn(*args)
        t1 = _perf_counter()
        cuda_sync()
        t2 = _perf_counter()
        launch.append((t1 - t0) * 1e3)
        wall.append((t2 - t0) * 1e3)
    del flush
    method = (
        f"CUDA events, L2 flushed before each run, {k} input set(s) rotated, "
        f"median of {n_runs} runs"
    )
    return RawTiming(samples, wall, launch, method, last if keep_outputs else [])


def _time_cpu(
    fn: Callable[..., Any],
    arg_sets: Sequence[Sequence[Any]],
    target_ms: float,
    keep_outputs: bool,
) -> RawTiming:
    k = len(arg_sets)
    fn(*arg_sets[0])  # warm-up: compilation and first-call costs
    samples: list[float] = []
    last: list[Any] = [None] * k
    t_start = _perf_counter()
    i = 0
    # At least 10 runs (so a candidate that changes behaviour after a few calls is caught by the
    # re-validation that follows), unless calls are so slow (the interpreter) that 5 s pass first.
    while i < k or (i < 50 * k and (i < 10 or (_perf_counter() - t_start) * 1e3 < target_ms)):
        if i >= k and (_perf_counter() - t_start) > 5.0:
            break
        t0 = _perf_counter()
        out = fn(*arg_sets[i % k])
        samples.append((_perf_counter() - t0) * 1e3)
        if keep_outputs:
            last[i % k] = _clone_outputs(out)
        i += 1
    method = f"CPU wall clock, median of {len(samples)} runs (not representative of a GPU)"
    return RawTiming(samples, list(samples), list(samples), method, last if keep_outputs else [])


def _clone_outputs(out: Any) -> Any:
    import torch

    if isinstance(out, torch.Tensor):
        return out.detach().clone()
    if isinstance(out, list | tuple):
        return type(out)(_clone_outputs(o) for o in out)
    return out


def summarise(samples_ms: Sequence[float]) -> TimingStats:
    """Median, mean, min and inter-quartile range of raw samples."""
    data = sorted(float(s) for s in samples_ms)
    if not data:
        raise ValueError("no timing samples")
    q = statistics.quantiles(data, n=4) if len(data) >= 2 else [data[0]] * 3
    return TimingStats(
        median_ms=statistics.median(data),
        mean_ms=statistics.fmean(data),
        min_ms=data[0],
        iqr_ms=q[2] - q[0],
        n_runs=len(data),
    )
