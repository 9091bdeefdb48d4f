"""Requests sent to harness children. Picklable, and never holding a tensor (Inductor's rule)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kernelwright.records import Precision


@dataclass(frozen=True, slots=True)
class ReferenceRequest:
    """Run the task's reference: trial inputs and outputs, work counts, baselines.

    The worker writes ``inputs.pt`` (shared with the candidate's child) and ``expected.pt``
    (read by the parent and deleted before any candidate code runs).
    """

    task_path: str
    size: str
    device: str
    precision: Precision
    seed: int
    trials: int
    distributions: bool
    time_eager: bool
    time_compile: bool
    cache_dir: str | None
    inputs_path: str
    expected_path: str


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """Shape and dtype of one expected output, so the child can poison matching memory."""

    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True, slots=True)
class CandidateRequest:
    """Import a candidate, run it on the trial inputs, time it, and write its outputs.

    The request names no task file: the candidate's process never sees the reference.
    """

    solution_path: str
    inputs_path: str
    outputs_path: str
    device: str
    precision: Precision
    timing: bool
    output_specs: tuple[OutputSpec, ...] = ()
    guard: bool = True
    protected_paths: tuple[str, ...] = field(default_factory=tuple)
