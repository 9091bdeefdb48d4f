"""Requests sent to harness children. Picklable, and never holding a tensor (Inductor's rule)."""

from __future__ import annotations

from dataclasses import dataclass

from kernelwright.records import Precision, Tolerance


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """Prepare the reference (see :mod:`kernelwright.evaluate.judge_worker`) and judge outputs.

    ``widen_atol``: under the fp32 policy, measure the reference's own error against float64
    and widen each output's atol to it (see :mod:`kernelwright.evaluate.correctness`); off when
    the user set ``--atol``, which then applies exactly.
    """

    task_path: str
    size: str
    device: str
    precision: Precision
    tolerance: Tolerance
    seed: int
    trials: int
    distributions: bool
    time_eager: bool
    time_compile: bool
    cache_dir: str | None
    inputs_path: str
    transport: str
    task_sha256: str = ""
    cache_baselines: bool = True
    widen_atol: bool = True


@dataclass(frozen=True, slots=True)
class CandidateRequest:
    """Import a candidate, run it on the published inputs, time it, publish its outputs.

    The request names no task file: the candidate's process never sees the reference.
    ``protected_paths`` are files and folders the candidate may not open (the task, the
    kernelwright home with its caches and archive); the guard's audit hook enforces it.
    """

    solution_path: str
    inputs_path: str
    outputs_path: str
    transport: str
    device: str
    precision: Precision
    timing: bool
    guard: bool = True
    protected_paths: tuple[str, ...] = ()
    release_path: str = ""
