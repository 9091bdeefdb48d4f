"""Options of one evaluation, with the defaults a user of ``kernelwright eval`` gets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from kernelwright.errors import ConfigError
from kernelwright.hardware.energy import Objective
from kernelwright.records import Precision, Violation


@runtime_checkable
class SourceConstraints(Protocol):
    """Human-imposed constraints on candidates (allowed backends, forbidden ops...).

    Enforced by the harness before a candidate runs: each violation rejects it, like a static
    guard check. ``kernelwright.constraints.Constraints`` is the constraints-file implementation.
    """

    def violations(
        self, source: str, params: Mapping[str, int | float | str] | None = None
    ) -> Sequence[Violation]:
        """What in ``source`` (and in the candidate's parameters, when given) breaks the
        constraints (empty when it complies)."""
        ...


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """How to evaluate.

    Attributes:
        device: ``auto`` (a GPU when one is visible), ``cuda`` or ``cpu`` (Triton's interpreter).
        precision: the policy for candidate and baselines alike.
        trials: correctness trials, each with a fresh seed and fresh inputs.
        atol, rtol: override the policy's (and the task's) tolerance. An ``atol`` given here
            applies exactly: without it, the fp32 policy widens each output's atol to a multiple
            of the reference's own rounding error, and every policy lets the float64 answer
            arbitrate elements outside the tolerance (see ``correctness``).
        timeout_s: limit for the candidate's whole process (import, trials, timing).
        baselines: time eager PyTorch (and torch.compile, see ``compile_baseline``).
        compile_baseline: time torch.compile too; None means yes on a GPU and no on the CPU,
            where compiling takes tens of seconds and says nothing about a GPU.
        timing: time the candidate at all (off makes a quick correctness-only check).
        guard: run the guard's checks (off only for debugging the harness itself).
        seed: base seed; None draws a fresh one per evaluation (recorded in the verdict), so a
            candidate can't memorise answers across evaluations.
        size: ``full``, ``small`` (the task's ``KERNELWRIGHT["small"]`` constants) or ``auto``
            (full on a GPU, small on the CPU).
        distributions: vary input distributions across trials; None follows the task
            (``KERNELWRIGHT["input_distributions"]``, default on).
        cache_baselines: reuse baseline timings per (task, size, device, policy, versions).
        constraints: human-imposed constraints checked on the source before it runs.
        determinism: run a correct candidate twice more on the first trial's inputs; outputs
            that differ bit for bit between the two reject it (``constraint-determinism``).
        shape_ranges: ``(dim, low, high)``: the candidate is also checked with the task's
            module-level integer ``dim`` (or ``dim_size``) set to ``low`` and to ``high``; a
            wrong output there rejects it (``constraint-shape-range``).
        memory_ceiling_bytes: a checked call's peak device memory beyond its inputs,
            parameters and outputs, at most (``constraint-memory``; measured on a GPU only).
        objective: what ranks candidates: ``time``, ``energy`` (joules per call, from the GPU's
            energy counter) or ``edp`` (their product). Energy is measured wherever the GPU
            has a counter; ranking by it needs one (baselines cached without it are re-timed).
    """

    device: str = "auto"
    precision: Precision = Precision.FP32
    trials: int = 5
    atol: float | None = None
    rtol: float | None = None
    timeout_s: float = 300.0
    baselines: bool = True
    compile_baseline: bool | None = None
    timing: bool = True
    guard: bool = True
    seed: int | None = None
    size: str = "auto"
    distributions: bool | None = None
    cache_baselines: bool = True
    constraints: SourceConstraints | None = None
    determinism: bool = False
    shape_ranges: tuple[tuple[str, int, int], ...] = ()
    memory_ceiling_bytes: int | None = None
    objective: Objective = Objective.TIME

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise ConfigError(f"--trials must be at least 1, got {self.trials}")
        if self.timeout_s <= 0:
            raise ConfigError(f"--timeout must be positive, got {self.timeout_s}")
        for name in ("atol", "rtol"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ConfigError(f"--{name} must be >= 0, got {value}")
        if self.size not in ("auto", "full", "small"):
            raise ConfigError(f"--size must be auto, full or small, got {self.size!r}")
