"""The Proposer seam (Optuna's ask/tell): anything that suggests the next candidates.

A proposer keeps no state it can't rebuild from ``history`` (the archive's record of this run),
so a killed search resumes by asking again. ``tell`` lets a proposer react at once (an LLM's
feedback turn, say) but must not be the only place it learns from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from kernelwright.records import Candidate, Task, Verdict


@dataclass(frozen=True, slots=True)
class Proposal:
    """A candidate to evaluate and, for the report, why it was proposed."""

    candidate: Candidate
    note: str = ""


@dataclass(frozen=True, slots=True)
class Trial:
    """One evaluated candidate in a run's history."""

    candidate_id: int
    candidate: Candidate
    verdict: Verdict
    note: str = ""


@runtime_checkable
class Proposer(Protocol):
    """Suggests candidates for a task from what has been tried."""

    name: str

    def ask(self, task: Task, history: Sequence[Trial], n: int) -> list[Proposal]:
        """Up to ``n`` new proposals; an empty list means the proposer has nothing left."""
        ...

    def tell(self, trials: Sequence[Trial]) -> None:
        """Results of the latest proposals (history already contains them)."""
        ...
