"""Shape-aware default parameters: the expert's first guess before any tuning.

Each heuristic maps a group's facts to the template's parameters. They are registered by name
and a skill file names its heuristic (``defaults = "row_onepass"``); each kernel family registers
its own beside its skills (``kernelwright/design/families/<family>/defaults.py``), with the
measurements behind its rules in a ``measurements.csv`` there. The shared rule of thumb for
memory-bound kernels on Hopper-class GPUs (H100/H200) is :func:`warps_for`: 4 warps for blocks
up to 2K elements, 8 up to 8K, 16 up to 32K, 32 beyond (Liger's and Triton's tutorials' rule).
"""

from __future__ import annotations

from collections.abc import Callable

from kernelwright.errors import ConfigError
from kernelwright.skills.conditions import GroupFacts

Heuristic = Callable[[GroupFacts], dict[str, int]]
HEURISTICS: dict[str, Heuristic] = {}


def heuristic(name: str) -> Callable[[Heuristic], Heuristic]:
    """Register a default-parameter heuristic (duplicates are refused)."""

    def deco(fn: Heuristic) -> Heuristic:
        if name in HEURISTICS:
            raise ConfigError(f"heuristic {name!r} is already registered")
        HEURISTICS[name] = fn
        return fn

    return deco


def defaults_for(name: str, facts: GroupFacts) -> dict[str, int]:
    """Run heuristic ``name`` (empty dict for no heuristic)."""
    if not name:
        return {}
    fn = HEURISTICS.get(name)
    if fn is None:
        import kernelwright.design.families  # noqa: F401  (registers every family's heuristics)

        fn = HEURISTICS.get(name)
    if fn is None:
        raise ConfigError(f"unknown heuristic {name!r}; known: {', '.join(sorted(HEURISTICS))}")
    return fn(facts)


def next_pow2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1)."""
    p = 1
    while p < n:
        p *= 2
    return p


def warps_for(block: int) -> int:
    """num_warps for a block of ``block`` fp32 elements."""
    if block >= 32768:
        return 32
    if block >= 8192:
        return 16
    if block >= 2048:
        return 8
    return 4
