"""Random search without replacement: the baseline every score is measured against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kernelwright.tuning.space import Space
from kernelwright.tuning.strategies.base import Observation, step_rng, unevaluated


@dataclass(frozen=True)
class RandomSearch:
    """Uniform draws among the valid configs not yet evaluated."""

    name: str = "random"

    def ask(self, space: Space, history: Sequence[Observation], n: int, seed: int) -> list[int]:
        """``n`` distinct unevaluated rows, uniformly at random."""
        free = unevaluated(space, history)
        take = min(n, len(free))
        return [int(r) for r in step_rng(seed, history).choice(free, size=take, replace=False)]


def make(**options: object) -> RandomSearch:
    """Registry factory."""
    return RandomSearch(**options)  # type: ignore[arg-type]
