"""The records of a bench run: one :class:`BenchItem` per task, one :class:`BenchResult` per item.

    BenchItem (task file + SOLS/<stem>.py or nothing) -> step -> BenchResult (verdict or error)

A result is either a harness :class:`~kernelwright.records.Verdict` or an outcome the harness
never reached (:class:`Outcome`): no solution file, or a task whose own reference failed. Both
kinds count as failures in every metric (KernelBench keeps failures in the denominator).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kernelwright.records import Verdict

Baseline = Literal["eager", "compile"]
BASELINES: tuple[Baseline, ...] = ("eager", "compile")


class Outcome(enum.StrEnum):
    """How a task's step ended: the harness judged it, or it never got that far."""

    JUDGED = "judged"  # a verdict exists (correct or not)
    MISSING = "missing"  # no SOLS/<stem>.py
    ERROR = "error"  # the task could not be judged (its reference failed, the file is broken)


@dataclass(frozen=True, slots=True)
class BenchItem:
    """One task of a suite and the solution paired with it.

    Attributes:
        task_id: the task file's stem, unique within a suite.
        task_path: absolute path of the task file.
        solution_path: ``SOLS/<task_id>.py``; None when it does not exist.
        family: ``KERNELWRIGHT["family"]`` of the task (``"other"`` when absent).
        group: the folder holding the task (``level1``, ``serving``...), for reports.
    """

    task_id: str
    task_path: str
    solution_path: str | None
    family: str = "other"
    group: str = ""


@dataclass(frozen=True, slots=True)
class BenchResult:
    """What the bench concluded for one task.

    ``key`` identifies (task text, solution text, options): a resumed run skips an item whose
    key is already in the journal. ``verdict`` is set when ``outcome`` is ``judged``; ``error``
    says why not otherwise.
    """

    task_id: str
    family: str
    group: str
    task_path: str
    solution_path: str | None
    outcome: Outcome
    verdict: Verdict | None = None
    error: str = ""
    key: str = ""
    task_sha256: str = ""
    solution_sha256: str = ""
    duration_s: float = 0.0
    timed_on: str = ""  # the worker's device (``cuda:1``) when tasks ran on several workers

    @property
    def status(self) -> str:
        """The verdict's status, or ``missing`` / ``error`` when there is no verdict."""
        if self.verdict is not None:
            return self.verdict.status.value
        return self.outcome.value

    @property
    def correct(self) -> bool:
        """Judged correct (and accepted by the guard)."""
        return self.verdict is not None and self.verdict.correct

    def speedup(self, baseline: Baseline) -> float | None:
        """Speedup over ``baseline`` when the task is correct and both were timed, else None."""
        if not self.correct or self.verdict is None:
            return None
        timing = self.verdict.timing
        value = timing.speedup_vs_eager if baseline == "eager" else timing.speedup_vs_compile
        return value if value is not None and value > 0 else None

    def baseline_ms(self, baseline: Baseline) -> float | None:
        """The baseline's median time (measured even when the candidate failed), or None."""
        if self.verdict is None:
            return None
        stats = self.verdict.timing.eager if baseline == "eager" else self.verdict.timing.compile
        return stats.median_ms if stats is not None else None

    @property
    def candidate_ms(self) -> float | None:
        """The candidate's median time, or None when it was not timed."""
        if self.verdict is None or self.verdict.timing.candidate is None:
            return None
        return self.verdict.timing.candidate.median_ms

    def energy_mj(self, which: str) -> float | None:
        """Energy a call (mJ) of ``candidate``, ``eager`` or ``compile``, where the GPU's
        energy counter measured it, else None."""
        if self.verdict is None:
            return None
        t = self.verdict.timing
        energy = {"candidate": t.candidate_energy, "eager": t.eager_energy,
                  "compile": t.compile_energy}[which]
        return energy.mj_per_call if energy is not None else None

    @property
    def sol_fraction(self) -> float | None:
        """Speed-of-light fraction of a correct, timed candidate, else None."""
        if not self.correct or self.verdict is None or self.verdict.sol is None:
            return None
        return self.verdict.sol.fraction

    @property
    def message(self) -> str:
        """One line saying what happened (the verdict's message or the error)."""
        return self.verdict.message if self.verdict is not None else self.error

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the flat columns reports use, then the full verdict."""
        return {
            "task": self.task_id,
            "family": self.family,
            "group": self.group,
            "task_path": self.task_path,
            "solution_path": self.solution_path,
            "outcome": self.outcome.value,
            "status": self.status,
            "correct": self.correct,
            "message": self.message,
            "candidate_ms": self.candidate_ms,
            "eager_ms": self.baseline_ms("eager"),
            "compile_ms": self.baseline_ms("compile"),
            "speedup_vs_eager": self.speedup("eager"),
            "speedup_vs_compile": self.speedup("compile"),
            "sol_fraction": self.sol_fraction,
            "candidate_mj": self.energy_mj("candidate"),
            "eager_mj": self.energy_mj("eager"),
            "compile_mj": self.energy_mj("compile"),
            "precision": self.verdict.precision.value if self.verdict else None,
            "key": self.key,
            "task_sha256": self.task_sha256,
            "solution_sha256": self.solution_sha256,
            "duration_s": self.duration_s,
            "error": self.error,
            # only runs over several workers say it: a one-worker run's document is unchanged
            **({"timed_on": self.timed_on} if self.timed_on else {}),
            "verdict": self.verdict.to_dict() if self.verdict is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BenchResult:
        """Rebuild a result written by :meth:`to_dict` (the flat columns are derived again)."""
        raw = data.get("verdict")
        return cls(
            task_id=str(data["task"]),
            family=str(data.get("family", "other")),
            group=str(data.get("group", "")),
            task_path=str(data.get("task_path", "")),
            solution_path=data.get("solution_path"),
            outcome=Outcome(data.get("outcome", Outcome.JUDGED.value)),
            verdict=Verdict.from_dict(raw) if isinstance(raw, Mapping) else None,
            error=str(data.get("error", "")),
            key=str(data.get("key", "")),
            task_sha256=str(data.get("task_sha256", "")),
            solution_sha256=str(data.get("solution_sha256", "")),
            duration_s=float(data.get("duration_s", 0.0)),
            timed_on=str(data.get("timed_on", "")),
        )
