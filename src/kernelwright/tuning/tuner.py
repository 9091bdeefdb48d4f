"""The live-tuning API: ask for configs, measure them yourself, tell the times.

    tuner = Tuner(space, strategy="bo", seed=0)
    tuner.warm_start([(config, time_ms), ...], source="M=4096")   # optional: similar shapes
    for _ in range(budget // 4):
        for config in tuner.ask(4):                                 # a batch for 4 workers
            tuner.tell(config, time_ms=measure(config))             # or failed=True
    config, time_ms = tuner.best

The tuner holds only the history; the strategy re-reads it on every ask (so a tuner rebuilt from
the same history and seed suggests the same configs). It runs no GPU code: the caller measures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from kernelwright.errors import ConfigError
from kernelwright.tuning.space import Config, Space, Value
from kernelwright.tuning.strategies import get_strategy
from kernelwright.tuning.strategies.base import Observation, Strategy


class Tuner:
    """Ask/tell tuning of one space with one strategy.

    Args:
        space: the constrained space of configs.
        strategy: a registered ask/tell strategy name (``bo``, ``bo-discovered``, ``gp-default``,
            ``tpe``, ``random``) or a :class:`Strategy` object.
        seed: makes suggestions reproducible.
        history: observations to resume from (as returned by :attr:`history`).
    """

    def __init__(
        self,
        space: Space,
        strategy: str | Strategy = "bo",
        *,
        seed: int = 0,
        history: Sequence[Observation] = (),
    ) -> None:
        made = get_strategy(strategy) if isinstance(strategy, str) else strategy
        if not hasattr(made, "ask"):
            raise ConfigError(
                f"strategy {made.name!r} drives its own loop (replay only); pick an ask/tell one"
            )
        self.space = space
        self.strategy: Strategy = made  # type: ignore[assignment]
        self.seed = seed
        self._history: list[Observation] = list(history)
        self._pending: list[int] = []

    @property
    def history(self) -> tuple[Observation, ...]:
        """Every observation told so far (warm-start ones included, with their source)."""
        return tuple(self._history)

    @property
    def n_evaluated(self) -> int:
        """Evaluations told for this run (warm-start observations excluded)."""
        return sum(1 for o in self._history if not o.source)

    def ask(self, n: int = 1) -> list[Config]:
        """Up to ``n`` configs to measure next, distinct and never told or pending before."""
        if n < 1:
            raise ConfigError(f"ask(n={n}): n must be >= 1")
        rows = self.strategy.ask(self.space, self._history, n + len(self._pending), self.seed)
        fresh = [r for r in rows if r not in self._pending][:n]
        self._pending.extend(fresh)
        return [self.space.config(r) for r in fresh]

    def tell(
        self, config: Mapping[str, Value], time_ms: float | None, failed: bool = False
    ) -> None:
        """Record a measurement: ``time_ms`` in milliseconds, or ``failed=True`` (or None).

        Raises:
            ConfigError: the config is not in the space, or the time is not a positive number.
        """
        row = self.space.require_index(config)
        if failed or time_ms is None:
            value = None
        elif not (isinstance(time_ms, int | float) and math.isfinite(time_ms) and time_ms > 0):
            raise ConfigError(
                f"tell({dict(config)}, time_ms={time_ms!r}): a time must be a positive number"
            )
        else:
            value = float(time_ms)
        self._history.append(Observation(row, value))
        if row in self._pending:
            self._pending.remove(row)

    def warm_start(
        self,
        observations: Iterable[tuple[Mapping[str, Value], float | None]],
        source: str = "prior",
    ) -> int:
        """Add measurements of similar shapes (another problem size, a related kernel).

        They inform the model (standardised within their source, with extra noise) and seed the
        initial design, but never count as evaluations. Configs not valid in this space are
        skipped. Returns how many were used.
        """
        if not source:
            raise ConfigError(
                "warm_start(source=''): prior observations need a non-empty source label"
            )
        used = 0
        for config, time_ms in observations:
            row = self.space.index(config)
            if row is None:
                continue
            ok = time_ms is not None and math.isfinite(time_ms) and time_ms > 0
            self._history.append(Observation(row, float(time_ms) if ok else None, source))  # type: ignore[arg-type]
            used += 1
        return used

    @property
    def best(self) -> tuple[Config, float] | None:
        """The fastest config told so far for this run, with its time; None before any success."""
        ok = [o for o in self._history if not o.source and o.time_ms is not None]
        if not ok:
            return None
        o = min(ok, key=lambda o: o.time_ms)  # type: ignore[arg-type, return-value]
        assert o.time_ms is not None
        return self.space.config(o.row), o.time_ms
