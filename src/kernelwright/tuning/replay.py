"""Replay a strategy on a fully measured space: no GPU, every evaluation a table lookup.

    for each repeat r (seed_r = hash(seed, r)):
        history = []
        while fewer than `budget` distinct configs evaluated:
            rows = strategy.ask(space, history, batch, seed_r)
            for each new row: time = table[row] (None if it failed); history.append(...)
    scores at every budget checkpoint b <= budget (see tuning.scoring)

An evaluation of a config already in the history costs nothing and is not repeated (a replay
returns the stored time); a failed config counts as an evaluation with no time. Strategies that
own their loop (Kernel Tuner's) are driven once per repeat with the same budget.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kernelwright.errors import ConfigError
from kernelwright.tuning.measured import MeasuredSpace
from kernelwright.tuning.scoring import best_so_far, expected_random_best, score
from kernelwright.tuning.strategies.base import Driver, Observation, Strategy

_STALL_LIMIT = 20  # asks in a row that add nothing before the replay gives up on a strategy


@dataclass(frozen=True)
class Run:
    """One repeat: the rows evaluated, in order, and their times (None = failed).

    ``seconds`` is the wall time the strategy took for the whole run (its asks; a lookup of a
    measured time costs microseconds), so ``seconds / len(rows)`` is its time per suggestion.
    """

    repeat: int
    rows: tuple[int, ...]
    times_ms: tuple[float | None, ...]
    seconds: float = field(default=0.0, compare=False)


@dataclass(frozen=True)
class BudgetScore:
    """Scores at one budget, over the repeats.

    Attributes:
        budget: number of evaluations.
        score_mean: mean of (R - b) / (R - t*) (0 = random search, 1 = optimum).
        score_std: its standard deviation over repeats.
        fraction_mean: mean of t* / b (best-found fraction of optimum).
        random_ms: R, expected best of random search at this budget.
        best_ms_mean: mean best time found.
    """

    budget: int
    score_mean: float
    score_std: float
    fraction_mean: float
    random_ms: float
    best_ms_mean: float


@dataclass(frozen=True)
class ReplayResult:
    """Every run of one strategy on one space."""

    space: str
    strategy: str
    budget: int
    seed: int
    optimum_ms: float
    runs: tuple[Run, ...]

    @property
    def ms_per_suggestion(self) -> float:
        """Mean wall time of the strategy per evaluated config, in ms (on this machine)."""
        n = sum(len(r.rows) for r in self.runs)
        return 1000.0 * sum(r.seconds for r in self.runs) / max(n, 1)

    def at(self, budget: int, measured: MeasuredSpace) -> BudgetScore:
        """Scores after the first ``budget`` evaluations of each run."""
        if not 1 <= budget <= self.budget:
            raise ConfigError(f"budget {budget} is outside 1..{self.budget}")
        worst = float(np.nanmax(measured.times_ms))
        random_ms = expected_random_best(measured.times_ms, budget)
        bests = []
        for run in self.runs:
            b = best_so_far(run.times_ms[:budget])[-1] if run.times_ms else math.inf
            bests.append(b if math.isfinite(b) else worst)
        scores = np.array([score(b, random_ms, self.optimum_ms) for b in bests])
        fractions = np.array([self.optimum_ms / b for b in bests])
        return BudgetScore(
            budget=budget,
            score_mean=float(scores.mean()),
            score_std=float(scores.std()),
            fraction_mean=float(fractions.mean()),
            random_ms=random_ms,
            best_ms_mean=float(np.mean(bests)),
        )


def transferred(
    source: MeasuredSpace, target: MeasuredSpace, rows: Sequence[int], label: str
) -> list[Observation]:
    """Measurements of ``rows`` of ``source`` (a space with the same parameters, measured on
    another GPU, say) as prior observations in ``target``'s rows, labelled ``label``; configs
    that ``target`` does not hold are left out."""
    found = []
    for row in rows:
        at = target.space.index(source.space.config(int(row)))
        if at is not None:
            found.append(Observation(int(at), source.lookup(int(row)), label))
    return found


def repeat_seed(seed: int, repeat: int) -> int:
    """The seed of one repeat: independent streams for every (seed, repeat)."""
    return int(np.random.SeedSequence([seed & 0xFFFFFFFF, repeat]).generate_state(1)[0])


def run_once(
    measured: MeasuredSpace,
    strategy: Strategy | Driver,
    budget: int,
    seed: int,
    batch: int = 1,
    prior: Sequence[Observation] = (),
) -> tuple[list[int], list[float | None]]:
    """One tuning run of at most ``budget`` distinct evaluations; returns rows and times.

    ``prior``: measurements from elsewhere (another GPU, another shape: observations with a
    ``source``), in this space's rows, handed to the strategy before its own as a warm start,
    as ``optimize`` hands it the archive's; they cost nothing from the budget and are not
    returned."""
    budget = min(budget, len(measured.space))
    if prior and hasattr(strategy, "drive"):
        raise ConfigError(f"strategy {strategy.name!r} cannot take prior measurements")
    if any(not o.source for o in prior):
        raise ConfigError("prior measurements need a source label")
    if hasattr(strategy, "drive"):
        rows = list(strategy.drive(measured, budget, seed))[:budget]  # type: ignore[union-attr]
        if len(set(rows)) != len(rows):
            raise ConfigError(f"strategy {strategy.name!r} returned a config twice")
        return rows, [measured.lookup(r) for r in rows]
    history: list[Observation] = []
    seen: set[int] = set()
    stalls = 0
    while len(history) < budget:
        asked = strategy.ask(measured.space, [*prior, *history],  # type: ignore[union-attr]
                             min(batch, budget - len(history)), seed)
        new = [r for r in dict.fromkeys(asked) if r not in seen]
        if not new:
            stalls += 1
            if stalls >= _STALL_LIMIT:
                raise ConfigError(f"strategy {strategy.name!r} stopped proposing new configs")
            continue
        stalls = 0
        for r in new[: budget - len(history)]:
            seen.add(r)
            history.append(Observation(int(r), measured.lookup(r)))
    return [o.row for o in history], [o.time_ms for o in history]


def replay(
    measured: MeasuredSpace,
    strategy: Strategy | Driver,
    *,
    budget: int,
    repeats: int,
    seed: int,
    batch: int = 1,
    on_run: Callable[[Run], None] | None = None,
) -> ReplayResult:
    """Run ``repeats`` independent tuning runs and collect them (scores via ``ReplayResult.at``)."""
    if budget < 1 or repeats < 1 or batch < 1:
        raise ConfigError(
            f"budget ({budget}), repeats ({repeats}) and batch ({batch}) must be >= 1"
        )
    runs = []
    for r in range(repeats):
        started = time.perf_counter()
        rows, times = run_once(measured, strategy, budget, repeat_seed(seed, r), batch)
        run = Run(r, tuple(rows), tuple(times), time.perf_counter() - started)
        runs.append(run)
        if on_run is not None:
            on_run(run)
    return ReplayResult(
        measured.name,
        strategy.name,
        min(budget, len(measured.space)),
        seed,
        measured.best_ms,
        tuple(runs),
    )


def checkpoints(budget: int) -> list[int]:
    """Budgets to report for a run of ``budget``: 10, 20, 40, 80... below it, and it."""
    out = [b for b in (10, 20, 40, 80, 160, 320, 640) if b < budget]
    return [*out, budget]


def write_trace(path: str | Path, measured: MeasuredSpace, runs: Sequence[Run]) -> None:
    """One JSON line per evaluation: ``{"repeat": r, "step": i, "config": {param: value}}``."""
    with Path(path).open("w") as fh:
        for run in runs:
            for i, row in enumerate(run.rows):
                line = {"repeat": run.repeat, "step": i, "config": measured.space.config(row)}
                fh.write(json.dumps(line) + "\n")
