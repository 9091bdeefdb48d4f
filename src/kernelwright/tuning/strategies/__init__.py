"""Search strategies, loaded lazily by name (Kernel Tuner's rule: a missing optional dependency
fails only when its strategy is used, with the command that installs it).

    random          random search without replacement (the baseline)
    neighbours      coordinate descent from the fastest config, nearest values first
    bo              Bayesian optimisation with the GPU-aware kernel
    neighbours-then-bo   one-parameter moves until 3 timings, then bo (optimize's default)
    bo-local        bo that searches near its fastest configs once it stops improving
    bo-select       bo with its kernel chosen per space by LOO-CRPS (library + discovered kernels)
    neighbours-then-bo-select   neighbours-then-bo with bo-select as its model
    bo-discovered   BO with a kernel discovered from the run's own data by LOO-CRPS
    gp-default      BO with the usual default GP (Matérn-5/2 ARD on raw parameters)
    bo-botorch      bo with its GP carried by GPyTorch and BoTorch (a comparison)   needs botorch
    tpe             Optuna's TPE sampler                                   needs optuna
    kt-<name>       Kernel Tuner's strategy <name>, replay only           needs kernel_tuner

Register another with :func:`register_strategy`; names are unique.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from kernelwright.errors import ConfigError
from kernelwright.tuning.strategies.base import Driver, Observation, Strategy

__all__ = [
    "Driver",
    "Observation",
    "Strategy",
    "get_strategy",
    "register_strategy",
    "strategy_names",
]


@dataclass(frozen=True)
class _Entry:
    module: str
    options: dict[str, Any] = field(default_factory=dict)
    requires: str | None = None  # the importable package the module needs
    install: str = ""


_KT = "kernelwright.tuning.strategies.kerneltuner"
_KT_INSTALL = "pip install 'kernelwright[bo]' (or: pip install kernel_tuner)"
KERNEL_TUNER_STRATEGIES = (
    "basinhopping",
    "bayes_opt",
    "diff_evo",
    "dual_annealing",
    "firefly_algorithm",
    "genetic_algorithm",
    "greedy_ils",
    "greedy_mls",
    "minimize",
    "mls",
    "pso",
    "random_sample",
    "simulated_annealing",
)

_REGISTRY: dict[str, _Entry] = {
    "random": _Entry("kernelwright.tuning.strategies.random_search"),
    "neighbours": _Entry("kernelwright.tuning.strategies.neighbours"),
    "neighbours-then-bo": _Entry(
        "kernelwright.tuning.strategies.staged", {}, "scipy", "pip install scipy"
    ),
    "bo": _Entry(
        "kernelwright.tuning.strategies.bayesopt", {"variant": "bo"}, "scipy", "pip install scipy"
    ),
    "bo-local": _Entry(
        "kernelwright.tuning.strategies.bayesopt",
        {"variant": "bo-local"},
        "scipy",
        "pip install scipy",
    ),
    "bo-select": _Entry(
        "kernelwright.tuning.strategies.bayesopt",
        {"variant": "bo-select"},
        "scipy",
        "pip install scipy",
    ),
    "neighbours-then-bo-select": _Entry(
        "kernelwright.tuning.strategies.staged",
        {"variant": "bo-select"},
        "scipy",
        "pip install scipy",
    ),
    "bo-discovered": _Entry(
        "kernelwright.tuning.strategies.bayesopt",
        {"variant": "bo-discovered"},
        "scipy",
        "pip install scipy",
    ),
    "gp-default": _Entry(
        "kernelwright.tuning.strategies.bayesopt",
        {"variant": "gp-default"},
        "scipy",
        "pip install scipy",
    ),
    "bo-botorch": _Entry(
        "kernelwright.tuning.strategies.bayesopt_botorch",
        {},
        "botorch",
        "pip install botorch gpytorch",
    ),
    "tpe": _Entry(
        "kernelwright.tuning.strategies.tpe", {}, "optuna", "pip install 'kernelwright[bo]'"
    ),
    **{
        f"kt-{n}": _Entry(_KT, {"strategy": n}, "kernel_tuner", _KT_INSTALL)
        for n in KERNEL_TUNER_STRATEGIES
    },
}


def strategy_names() -> list[str]:
    """Every registered name, sorted."""
    return sorted(_REGISTRY)


def register_strategy(name: str, module: str, **options: Any) -> None:
    """Register ``module.make(**options)`` under ``name``; refuses a name already taken."""
    if name in _REGISTRY:
        raise ConfigError(
            f"strategy {name!r} is already registered ({_REGISTRY[name].module}); pick another name"
        )
    _REGISTRY[name] = _Entry(module, dict(options))


def get_strategy(name: str, **options: Any) -> Strategy | Driver:
    """Build the strategy registered as ``name`` (importing its module now).

    Raises:
        ConfigError: unknown name (the message lists the known ones), or a missing optional
            dependency (the message says what to install).
    """
    entry = _REGISTRY.get(name)
    if entry is None:
        raise ConfigError(
            f"unknown strategy {name!r}; known: {', '.join(strategy_names())}. "
            "Add one with kernelwright.tuning.strategies.register_strategy(name, module)."
        )
    if entry.requires is not None:
        try:
            importlib.import_module(entry.requires)
        except ImportError as exc:
            raise ConfigError(
                f"strategy {name!r} needs {entry.requires!r}: {entry.install}"
            ) from exc
    module = importlib.import_module(entry.module)
    made: Strategy | Driver = module.make(**{**entry.options, **options})
    return made
