"""The one "suggest next" seam (Optuna's ask/tell), and the records of a search's history.

    Suggester[Domain, Record, Suggestion].ask(domain, history, n, seed) -> suggestions

Everything that suggests what to try next implements it, at two levels:

    Proposer   = Suggester[Task, Trial, Proposal]     candidates for a task (templates, LLM)
    Strategy   = Suggester[Space, Observation, int]   configs of a parameter space (BO, TPE,
                                                      coordinate descent; ``kernelwright.tuning``)

A suggester keeps no state it cannot rebuild from ``history``: ``ask`` is a function of its
arguments (caches of pure results are allowed). Telling is recording: whoever drives the loop
appends each result to the history it owns (the archive, a ``Tuner``, a replay), as an Optuna
study tells its storage and its samplers re-read it. So a killed search resumes by asking again
with the recorded history, and the same seed gives the same suggestions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias, TypeVar, runtime_checkable

from kernelwright.hardware.energy import Objective
from kernelwright.hardware.energy import cost as energy_cost
from kernelwright.records import Candidate, Task, Verdict

Domain = TypeVar("Domain", contravariant=True)
Record = TypeVar("Record", contravariant=True)
Suggestion = TypeVar("Suggestion")


@runtime_checkable
class Suggester(Protocol[Domain, Record, Suggestion]):
    """Suggests what to try next in ``domain`` from what was tried there."""

    @property
    def name(self) -> str:
        """What reports call it (``templates``, ``llm:openai:gpt-4o``, ``bo``...)."""
        ...

    def ask(self, domain: Domain, history: Sequence[Record], n: int, seed: int) -> list[Suggestion]:
        """Up to ``n`` new suggestions; an empty list means nothing is left to suggest.

        Args:
            domain: what is searched (a task, a parameter space).
            history: every result so far, in order.
            n: how many suggestions (a batch for parallel evaluation).
            seed: the run's seed; the same history and seed give the same suggestions.
        """
        ...


@dataclass(frozen=True, slots=True)
class Proposal:
    """A candidate to evaluate and, for the report, why it was proposed.

    The candidate it was derived from, if any, is ``candidate.parent`` (an archive id from the
    history): the archive keeps it, so a run's tree or lineage can be drawn.
    """

    candidate: Candidate
    note: str = ""


# The flag of a verdict the search wrote itself: the candidate broke the run's constraints and
# was refused before any evaluation (it costs no evaluation of the budget).
REFUSED = "refused before evaluation: it breaks the run's constraints"

# The flag of a verdict the search wrote itself: a tuning move whose kernels, compiled for the
# run's GPU before any evaluation, spill registers where its structure's best candidate's do
# not (``search.spill_screen``; it costs no evaluation of the budget).
SPILLS = "not evaluated: compiled for the GPU, its kernels spill registers where the best's do not"

# The flag of a verdict the search copied: the candidate renders to the same kernel at the task's
# shapes as one already judged, whose verdict it carries (it costs no evaluation of the budget).
EQUIVALENT = "not evaluated: the same kernel as an evaluated candidate, whose verdict it reuses"

# The flag of a second evaluation of a run's best candidate once the search is over: the best
# was chosen as the least of many noisy times, so its own time is biased low; a fresh
# evaluation's is not, and is the one reported (it costs no evaluation of the budget, and is
# never itself a candidate for best).
CONFIRMATION = ("a second evaluation of the run's best candidate, for a time free of the "
                "choice's bias")

# The flag of a stand-in verdict while a candidate is being judged by one of several workers:
# proposers see it as tried and failed so far (for a tree search, a virtual loss that steers
# the next proposals elsewhere), and it never reaches the archive.
PENDING = "being evaluated by another worker"


@dataclass(frozen=True, slots=True)
class Trial:
    """One candidate of a run's history with its verdict (evaluated, or refused before)."""

    candidate_id: int
    candidate: Candidate
    verdict: Verdict
    note: str = ""

    @property
    def refused(self) -> bool:
        """Refused by the constraints before evaluation (see :data:`REFUSED`)."""
        return REFUSED in self.verdict.flags

    @property
    def screened(self) -> bool:
        """Compiled, not run: it spills where its structure's best does not (:data:`SPILLS`)."""
        return SPILLS in self.verdict.flags

    @property
    def reused(self) -> bool:
        """Equivalent to an evaluated candidate, whose verdict it carries (:data:`EQUIVALENT`)."""
        return EQUIVALENT in self.verdict.flags

    @property
    def pending(self) -> bool:
        """Still being judged (a stand-in of a search over several workers, see :data:`PENDING`)."""
        return PENDING in self.verdict.flags

    @property
    def confirmation(self) -> bool:
        """A second evaluation of the run's best (see :data:`CONFIRMATION`)."""
        return CONFIRMATION in self.verdict.flags

    @property
    def evaluated(self) -> bool:
        """Judged by the harness (neither refused nor screened nor a reused verdict nor a
        confirmation): what a budget counts."""
        return not (self.refused or self.screened or self.reused or self.pending
                    or self.confirmation)


Proposer: TypeAlias = Suggester[Task, Trial, Proposal]


class _Judged(Protocol):
    @property
    def verdict(self) -> Verdict: ...


J = TypeVar("J", bound=_Judged)


def candidate_ms(verdict: Verdict) -> float:
    """The candidate's median time in ms; infinity when it was not timed."""
    stats = verdict.timing.candidate
    return stats.median_ms if stats is not None else float("inf")


def candidate_cost(verdict: Verdict, objective: Objective = Objective.TIME) -> float:
    """What ``objective`` ranks the candidate by (ms, mJ or mJ x ms); infinity when the
    quantity it needs was not measured."""
    t = verdict.timing
    energy = t.candidate_energy.mj_per_call if t.candidate_energy is not None else None
    ms = t.candidate.median_ms if t.candidate is not None else None
    return energy_cost(ms, energy, objective)


def eager_cost(verdict: Verdict, objective: Objective = Objective.TIME) -> float:
    """The same for the eager baseline the verdict carries."""
    t = verdict.timing
    energy = t.eager_energy.mj_per_call if t.eager_energy is not None else None
    return energy_cost(t.eager.median_ms if t.eager is not None else None, energy, objective)


def best_correct(judged: Iterable[J], objective: Objective = Objective.TIME) -> J | None:
    """The correct item best under ``objective`` (by default the lowest time; the first correct
    one when none was measured); None when none is correct. Items are trials, archive records:
    anything judged. A confirmation (:data:`CONFIRMATION`) is never chosen: it re-measures the
    choice."""
    best: J | None = None
    for item in judged:
        if CONFIRMATION in item.verdict.flags:
            continue
        if item.verdict.correct and (
            best is None
            or candidate_cost(item.verdict, objective) < candidate_cost(best.verdict, objective)
        ):
            best = item
    return best
