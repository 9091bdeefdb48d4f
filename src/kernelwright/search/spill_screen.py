"""Screen tuning moves that spill registers, by compiling them before they cost an evaluation.

A one-parameter move of a template's design (a smaller tile, more warps) can change how Triton
lays the accumulator over a warp's threads, and the kernel that comes out may hold more values
than a thread's 255 registers: it spills them to local memory, and runs several times slower
(on an H200 the direct convolution's 64 x 64 tile in 4 warps spilled 280 bytes and ran 5-9x
slower than its 128 x 64 default, which spills none). Which settings spill is not a rule of the
parameters (``conv/sweeps/direct_registers.csv``: neighbours of a clean setting spill and their
neighbours do not), but ptxas says so in about a second, where an evaluation takes several.

So on a GPU run, before the harness judges a template's tuning move, :class:`SpillScreen`
compiles its kernels for the GPU's architecture (``design.compile_check``, no launch) and, when
they spill where the best candidate of the same structure compiles without spilling, the search
archives the move with a verdict flagged :data:`~kernelwright.search.proposer.SPILLS` instead of
judging it: the proposer learns the move failed, and the budget is not charged. A structure's
first candidate, a move of a structure whose best spills itself, and any candidate the
templates did not write are never screened; a compile that fails says nothing here (the harness
reports it). Nor is a move of a structure whose best holds fewer than :data:`CROWDED`
registers a thread in every kernel: one step of a parameter (a tile halved or doubled) leaves
such a kernel room under the 255 a thread may hold, and its compile would only cost the search
time (the best is compiled once a structure, its moves not at all).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernelwright.design.choices import design_from_json
from kernelwright.errors import ConfigError
from kernelwright.records import Candidate, Precision, Status, Task, Verdict
from kernelwright.search.proposer import SPILLS, Trial, best_correct

# A screen: the verdict of a candidate not worth evaluating, or None to judge it
Screen = Callable[[Candidate, Sequence[Trial]], Verdict | None]

# Compiles a source's kernels: each one's registers a thread and spilled bytes (None where
# ptxas did not say)
SpillCounter = Callable[[str], list[tuple[int | None, int | None]]]

# Registers a thread from which a kernel is crowded: a move of its parameters may spill (the
# direct convolution's default at 152 spilled 280 bytes one step away); below, it has room
CROWDED = 128


@dataclass(frozen=True, slots=True)
class Usage:
    """A source's kernels compiled: the most registers any takes, and the bytes all spill
    (None: unknown, the compile failed or ptxas was not found)."""

    registers: int | None
    spilled: int | None


@dataclass
class SpillScreen:
    """See the module docstring. ``count`` compiles a source (by default
    :func:`compile_spills` for the task, its size, the GPU's architecture and the policy)."""

    task: Task
    precision: Precision
    count: SpillCounter
    _usage: dict[str, Usage] = field(default_factory=dict)  # by source sha256

    @classmethod
    def for_gpu(cls, task: Task, size: str, precision: Precision, arch: int) -> SpillScreen:
        """The screen of a run on a GPU of compute capability ``arch`` (90: Hopper)."""
        return cls(task, precision, lambda source: compile_spills(
            source, task.path, size, arch, precision))

    def __call__(self, candidate: Candidate, history: Sequence[Trial]) -> Verdict | None:
        structure = _tuning_structure(candidate)
        if structure is None:
            return None
        same = [t for t in history if _structure(t.candidate) == structure and t.evaluated]
        best = best_correct(same)
        if best is None:
            return None
        room = self._usage_of(best.candidate)
        if room.spilled != 0 or room.registers is None or room.registers < CROWDED:
            return None
        spilled = self._usage_of(candidate).spilled
        if not spilled:
            return None
        return Verdict(
            status=Status.REJECTED,
            correct=False,
            message=(f"screened before evaluation: compiled for the GPU its kernels spill "
                     f"{spilled} bytes of registers, where candidate {best.candidate_id} of "
                     f"the same structure spills none"),
            precision=self.precision,
            tolerance=self.precision.default_tolerance,
            flags=(SPILLS,),
            task_sha256=self.task.sha256,
            solution_sha256=candidate.sha256,
        )

    def _usage_of(self, candidate: Candidate) -> Usage:
        """The candidate's kernels compiled (once a source)."""
        key = candidate.sha256
        if key not in self._usage:
            try:
                kernels = self.count(candidate.source)
            except Exception:  # a screen that cannot compile leaves the verdict to the harness
                kernels = [(None, None)]
            regs = [r for r, _ in kernels]
            spills = [s for _, s in kernels]
            known = bool(kernels) and None not in regs and None not in spills
            self._usage[key] = (Usage(max(r for r in regs if r is not None),
                                      sum(s for s in spills if s is not None))
                                if known else Usage(None, None))
        return self._usage[key]


def compile_spills(source: str, task_path: str, size: str, arch: int,
                   precision: Precision) -> list[tuple[int | None, int | None]]:
    """Each kernel launch's registers a thread and spilled bytes, compiled for ``sm_<arch>``
    under the policy's matmul flags (the wrappers choose their math from them), the process's
    own flags restored after."""
    from kernelwright.design.compile_check import compile_check
    from kernelwright.evaluate.precision import apply_policy, policy_flags

    saved = policy_flags()
    apply_policy(precision)
    try:
        reports = compile_check(source, task_path, size, arch=arch, precision=precision.value)
    finally:
        _restore(saved)
    return [(r.registers, r.spill_bytes) if r.ok else (None, None) for r in reports]


def _restore(flags: dict[str, Any]) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = flags["cuda.matmul.allow_tf32"]
    torch.backends.cudnn.allow_tf32 = flags["cudnn.allow_tf32"]
    torch.set_float32_matmul_precision(flags["float32_matmul_precision"])


def _tuning_structure(candidate: Candidate) -> str | None:
    """The structure a template's tuning move keeps (None: not such a move)."""
    if candidate.origin != "template" or candidate.design.get("stage") != "tuning":
        return None
    return _structure(candidate)


def _structure(candidate: Candidate) -> str | None:
    if candidate.origin != "template" or not candidate.design.get("groups"):
        return None
    try:
        return design_from_json(candidate.design, candidate.params).structure_key()
    except (ConfigError, KeyError, ValueError, TypeError):
        return None
