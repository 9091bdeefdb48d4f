"""The hardware-tuning stage: constrained spaces, GP-based Bayesian optimisation with GPU-aware
kernels, kernel discovery by LOO-CRPS, and replay of strategies on measured spaces.

    Space (params + restrictions)  ->  Tuner(space, "bo").ask(n)  ->  caller measures  ->  tell
    MeasuredSpace (CSV)            ->  replay(measured, strategy)  ->  scores vs random search

Modules: ``space`` and ``restrictions`` (what may be tuned), ``measured`` (fully measured CSVs),
``gp/`` (features, kernel expressions, model, LOO-CRPS, acquisition), ``initial`` (space-filling
designs), ``discovery`` (evolving kernels), ``strategies/`` (ask/tell strategies, lazily loaded),
``replay`` and ``scoring`` (Kernel Tuner's methodology), ``tuner`` (the live API).
"""

from kernelwright.tuning.measured import MeasuredSpace, load_measured_csv
from kernelwright.tuning.replay import ReplayResult, replay
from kernelwright.tuning.space import Config, Kind, Param, Space
from kernelwright.tuning.strategies import get_strategy, strategy_names
from kernelwright.tuning.strategies.base import Observation
from kernelwright.tuning.tuner import Tuner

__all__ = [
    "Config",
    "Kind",
    "MeasuredSpace",
    "Observation",
    "Param",
    "ReplayResult",
    "Space",
    "Tuner",
    "get_strategy",
    "load_measured_csv",
    "replay",
    "strategy_names",
]
