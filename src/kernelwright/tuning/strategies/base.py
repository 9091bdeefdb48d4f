"""The seams every search strategy plugs into.

    Observation     one evaluated config: its row in the space's table, its time or None (failed)
    Strategy        ask(space, history, n, seed) -> rows to evaluate next: the search's
                    ``Suggester`` protocol (``kernelwright.search.proposer``) over a Space
    Driver          drive(measured, budget, seed) -> rows in evaluation order (replay only: a
                    third-party loop, such as Kernel Tuner's strategies, that owns its own loop)

A Strategy keeps no state that the history cannot rebuild: ``ask`` is a pure function of its
arguments (memo caches of model fits are allowed: they are recomputed from the history when
missing). "Tell" is appending an Observation to the history the caller owns, so a stopped run
resumes from its history and the same seed gives the same suggestions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from kernelwright.search.proposer import Suggester
from kernelwright.tuning.space import Space

if TYPE_CHECKING:
    from kernelwright.tuning.measured import MeasuredSpace


@dataclass(frozen=True, slots=True)
class Observation:
    """One evaluation.

    Attributes:
        row: the config's row in ``space.table``.
        time_ms: measured time, or None when the config failed (compile, launch, resources).
        source: ``""`` for this tuning run; a label (a shape, a GPU) for prior data used to
            warm-start. Prior observations inform the model but never count as evaluations.
    """

    row: int
    time_ms: float | None
    source: str = ""

    @property
    def failed(self) -> bool:
        """True when the config did not run."""
        return self.time_ms is None


Strategy: TypeAlias = Suggester[Space, Observation, int]
"""Suggests rows of ``space.table`` not yet evaluated in ``history``, distinct, at most ``n``."""


class Driver(Protocol):
    """A strategy that runs its own loop against a measured space (replay only)."""

    name: str

    def drive(self, measured: MeasuredSpace, budget: int, seed: int) -> list[int]:
        """Rows evaluated, in order, distinct, at most ``budget`` of them."""
        ...


def step_rng(seed: int, history: Sequence[Observation]) -> np.random.Generator:
    """The generator for one ask: a function of the seed and how far the run has got."""
    return np.random.default_rng([seed & 0xFFFFFFFF, len(history)])


def evaluated_rows(history: Sequence[Observation]) -> set[int]:
    """Rows this run has already evaluated (prior observations excluded)."""
    return {o.row for o in history if not o.source}


def unevaluated(space: Space, history: Sequence[Observation]) -> npt.NDArray[np.intp]:
    """`(m,)` rows of the space not yet evaluated, ascending."""
    mask = np.ones(len(space), dtype=bool)
    done = list(evaluated_rows(history))
    if done:
        mask[done] = False
    return np.flatnonzero(mask)
