"""The guard's registry: every defence is a named, documented :class:`Check`.

A check reads a :class:`GuardContext` (the candidate's source; and, for runtime checks, the
judge's report) and returns plain-language reasons; each reason becomes a
:class:`~kernelwright.records.Violation` carrying the check's name, and any violation makes the
verdict ``rejected``. Static checks run in the parent before any candidate code does; runtime
checks run in the parent on the judge's report. What the candidate's own process observed about
itself is in the report too: checks may refuse on it, never accept on it.

Register a check with::

    @register_check("my-check", stage="runtime", catches="...", how="...")
    def my_check(ctx: GuardContext) -> list[str]: ...
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kernelwright.records import Violation

Stage = Literal["static", "runtime"]
CheckFn = Callable[["GuardContext"], list[str]]


@dataclass(frozen=True, slots=True)
class GuardContext:
    """What checks may look at.

    Attributes:
        source: the candidate's source text.
        tree: its parsed AST (None when it does not parse: the import then fails on its own).
        device: ``cuda`` or ``cpu``.
        prepared: the judge's summary of the reference (operators, output specs, floor...).
        report: the judge's report on the candidate's process (comparisons, timing, ablation,
            what the process observed about itself).
    """

    source: str
    tree: ast.Module | None
    device: str = "cpu"
    prepared: Mapping[str, Any] = field(default_factory=dict)
    report: Mapping[str, Any] = field(default_factory=dict)

    @property
    def observations(self) -> Mapping[str, Any]:
        """What the candidate's process reported about itself at the end (refusals only)."""
        obs = self.report.get("observations")
        return obs if isinstance(obs, Mapping) else {}

    @property
    def observed(self) -> Mapping[str, Any]:
        """What the candidate's process saw of its first checked call (refusals only)."""
        obs = self.report.get("observed")
        return obs if isinstance(obs, Mapping) else {}

    @property
    def trials_correct(self) -> bool:
        """Every trial run (not variants) matched the reference."""
        runs = [r for r in self.report.get("runs", []) if r.get("kind") == "trial"]
        return bool(runs) and all(r.get("ok") for r in runs)


@dataclass(frozen=True, slots=True)
class Check:
    """One defence: its name, when it runs, what it catches and how."""

    name: str
    stage: Stage
    catches: str
    how: str
    fn: CheckFn

    def run(self, ctx: GuardContext) -> list[Violation]:
        """Apply the check."""
        return [Violation(self.name, reason) for reason in self.fn(ctx)]


CHECKS: dict[str, Check] = {}


def register_check(
    name: str, *, stage: Stage, catches: str, how: str
) -> Callable[[CheckFn], CheckFn]:
    """Decorator adding a check to :data:`CHECKS`; duplicate names are refused."""

    def decorator(fn: CheckFn) -> CheckFn:
        if name in CHECKS:
            raise ValueError(
                f"a guard check named {name!r} is already registered "
                f"({CHECKS[name].fn.__module__}); choose another name"
            )
        CHECKS[name] = Check(name, stage, catches, how, fn)
        return fn

    return decorator


def get_check(name: str) -> Check:
    """The check called ``name``; an unknown name lists the known ones."""
    _load_builtin_checks()
    try:
        return CHECKS[name]
    except KeyError:
        known = ", ".join(sorted(CHECKS))
        raise KeyError(
            f"no guard check named {name!r}; known checks: {known}. Register new ones with "
            "@register_check in a module imported by kernelwright.evaluate.guard"
        ) from None


def all_checks() -> list[Check]:
    """Every registered check, static first, in registration order."""
    _load_builtin_checks()
    return sorted(CHECKS.values(), key=lambda c: c.stage != "static")


def run_checks(stage: Stage, ctx: GuardContext) -> list[Violation]:
    """Apply every check of ``stage``."""
    violations: list[Violation] = []
    for check in all_checks():
        if check.stage == stage:
            violations.extend(check.run(ctx))
    return violations


def _load_builtin_checks() -> None:
    # Importing the modules registers their checks (once; Python caches modules).
    from kernelwright.evaluate.guard import runtime_checks, static_checks  # noqa: F401
