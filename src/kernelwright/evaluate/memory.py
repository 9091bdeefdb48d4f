"""How much of the device an evaluation may use, from the task's measured footprint.

The judge measures one reference call (inputs, outputs, parameters, the peak above what was
allocated before the call) and the device's free memory before anything else, then plans:

    judge       the current call's pristine inputs and expected outputs; optionally every trial's
                (``cache_runs``: computed once per session instead of once per candidate), the
                float64 reference (``float64``: about twice a call while it runs, and the float64
                outputs kept with each cached trial for the precision check) and a private copy
                of the candidate's outputs (``copy_outputs``; otherwise compared where they lie)
    candidate   its parameters, its workspace and ``timing_sets`` input sets with their outputs
                (the calls of one timed batch, each on inputs of its own; the judge draws the
                same sets in its own memory first)

Options are given up until the plan fits 90% of the free memory: first the private copy, then
the kept trials, last the float64 reference (the precision check needs it). The smallest plan
needs about twice one eager call, so every task that eager PyTorch can run twice over on the
device evaluates; a task beyond that gets a plain message, never an out-of-memory crash.

Notation: ``in_b``, ``out_b``, ``param_b`` bytes of a call's inputs, outputs and parameters;
``work_b`` the peak allocated during the forward above what was allocated before it (outputs and
temporaries).
"""

from __future__ import annotations

from dataclasses import dataclass, field

USABLE_FRACTION = 0.9
MAX_TIMING_SETS = 256
CONTEXT_BYTES = 1 << 30  # a CUDA context and allocator slack per process


@dataclass(frozen=True, slots=True)
class Footprint:
    """One reference call, measured in bytes."""

    in_b: int
    out_b: int
    param_b: int
    work_b: int

    @property
    def call_b(self) -> int:
        """What a single call needs beyond its parameters."""
        return self.in_b + max(self.work_b, self.out_b)


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """What the judge keeps and what the candidate may use; see the module docstring."""

    free_b: int
    cache_runs: bool
    float64: bool
    copy_outputs: bool
    timing_sets: int
    candidate_b: int
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "free_gb": round(self.free_b / 1e9, 2),
            "cache_runs": self.cache_runs,
            "float64": self.float64,
            "copy_outputs": self.copy_outputs,
            "timing_sets": self.timing_sets,
            "candidate_gb": round(self.candidate_b / 1e9, 2),
            "notes": list(self.notes),
        }


class TooLarge(Exception):
    """The task cannot be judged on this device even with the smallest plan."""


def judge_bytes(fp: Footprint, runs: int, *, cache: bool, float64: bool, copy: bool) -> int:
    """What the judge holds at its peak under these options (see the module docstring)."""
    judge_call = fp.in_b + fp.out_b
    kept = judge_call + (2 * fp.out_b if float64 else 0)  # a trial kept: its float64 outputs too
    held = fp.param_b + judge_call + (runs * kept if cache else 0)
    held += fp.out_b if copy else 0
    held += 2 * (fp.param_b + fp.call_b) if float64 else fp.work_b
    return held


def plan_memory(fp: Footprint, free_b: int, runs: int, *, want_float64: bool) -> MemoryPlan:
    """The richest plan that fits; raises TooLarge when even the smallest does not."""
    budget = int(USABLE_FRACTION * free_b) - 2 * CONTEXT_BYTES
    candidate_fixed = fp.param_b + fp.call_b
    choices = [
        (cache, f64, copy)
        for f64 in ((True, False) if want_float64 else (False,))
        for cache in (True, False)
        for copy in (True, False)
    ]
    for cache, f64, copy in choices:
        judge = judge_bytes(fp, runs, cache=cache, float64=f64, copy=copy)
        left = budget - judge - candidate_fixed
        if left < 0:
            continue
        # A timed call: its inputs and outputs in the candidate, its inputs drawn in the judge.
        per_set = 2 * fp.in_b + fp.out_b
        sets = MAX_TIMING_SETS if per_set == 0 else int(min(MAX_TIMING_SETS, left // per_set))
        if sets < 2 and (cache or f64 or copy):
            continue  # prefer two timing sets to any luxury
        notes = []
        if not cache:
            notes.append("trials recomputed per candidate (not kept between candidates)")
        if want_float64 and not f64:
            notes.append("no float64 reference: too large (strict tolerance, no precision check)")
        if not copy:
            notes.append("outputs compared in the candidate's memory (no private copy)")
        return MemoryPlan(
            free_b=free_b,
            cache_runs=cache,
            float64=f64,
            copy_outputs=copy,
            timing_sets=max(1, sets),
            candidate_b=candidate_fixed + max(1, sets) * per_set,
            notes=tuple(notes),
        )
    raise TooLarge(
        f"a single call needs {fp.call_b / 1e9:.1f} GB plus {fp.param_b / 1e9:.1f} GB of "
        f"parameters; judging it needs about {smallest_free_b(fp, runs) / 1e9:.1f} GB free "
        f"and the device has {free_b / 1e9:.1f} GB free: use --size small or a device with "
        "more memory"
    )


def smallest_free_b(fp: Footprint, runs: int) -> int:
    """The free memory the smallest plan needs: what it holds (the judge with no option, the
    candidate with one input set), as :func:`plan_memory` counts it against the free memory."""
    held = judge_bytes(fp, runs, cache=False, float64=False, copy=False) + fp.param_b + fp.call_b
    return int((held + 2 * CONTEXT_BYTES) / USABLE_FRACTION) + 1


# A call's inputs and parameters, in bytes, past which Triton's interpreter takes minutes a call:
# the CPU runs a task at its small size, and a task that sets none runs at its own
INTERPRETER_CALL_BYTES = 256 << 20


def refuse_unsized_on_cpu(call_b: int) -> None:
    """Refuse, before anything is allocated, a task that sets no small size and whose own size
    (``call_b``: a call's inputs and parameters, counted without allocating) is past what the
    CPU can run."""
    if call_b > INTERPRETER_CALL_BYTES:
        raise TooLarge(
            f"it sets no small size (KERNELWRIGHT['small']) and its own, {call_b / 1e9:.1f} GB of "
            f"inputs a call, is past the {INTERPRETER_CALL_BYTES / 1e9:.2f} GB Triton's "
            "interpreter runs in minutes: add a small size to the file or evaluate it on a GPU"
        )


def unlimited_plan(runs: int) -> MemoryPlan:
    """The plan on the CPU, where the tasks' small sizes make memory no concern."""
    return MemoryPlan(
        free_b=0, cache_runs=True, float64=True, copy_outputs=True, timing_sets=2, candidate_b=0
    )
