"""Restrictions a person puts on tuning spaces, and where they are enforced.

    SpaceRules(restrictions=("BLOCK_M % 64 == 0", "shared_bytes <= 98304"),
               derived=(("shared_bytes", "(BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * STAGES * 4"),),
               domains=(("BLOCK", (16, 32, 64, 128)),))

A restriction names kernel parameters by their skill names (``BLOCK_M``), never by a space's
per-group names (``g0_BLOCK_M``): it binds every kernel group that has all the parameters it reads
and says nothing about the others. It is enforced twice:

- the skills it applies to carry it as one more constraint (:func:`restrict_library`), so the
  tuning space built from them (``search.tunable``) never proposes a configuration breaking it;
- a candidate's parameters are screened before evaluation (:meth:`SpaceRules.violations`), which
  covers the first, untuned designs and any other proposer that reports parameters.

``domains`` declares the finite values of names the skill library does not know; the solver
(:mod:`.solver`) checks satisfiability, conflicts and redundancy over them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kernelwright.constraints.expressions import expand_derived
from kernelwright.records import Violation
from kernelwright.tuning.restrictions import Expression

if TYPE_CHECKING:
    from kernelwright.skills.library import SkillLibrary

CHECK = "constraint-space"


@dataclass(frozen=True, slots=True)
class SpaceRules:
    """Restrictions over kernel parameters (see the module docstring).

    Attributes:
        restrictions: whitelisted expressions (``tuning.restrictions`` syntax) over parameter
            names and derived quantities.
        derived: ``(name, expression)`` of quantities computed from parameters.
        domains: ``(name, values)`` of names whose finite domain the library does not give.
    """

    restrictions: tuple[str, ...] = ()
    derived: tuple[tuple[str, str], ...] = ()
    domains: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def __post_init__(self) -> None:
        for text in (*self.restrictions, *(e for _, e in self.derived)):
            Expression.parse(text)  # raises ConfigError naming the text

    def __bool__(self) -> bool:
        return bool(self.restrictions)

    @property
    def derived_map(self) -> dict[str, str]:
        """Derived quantities by name."""
        return dict(self.derived)

    def expanded(self) -> tuple[Expression, ...]:
        """Each restriction with derived quantities written out, parsed (same order)."""
        return tuple(
            Expression.parse(expand_derived(r, self.derived_map)) for r in self.restrictions
        )

    def applicable(self, names: Iterable[str]) -> tuple[tuple[str, Expression], ...]:
        """``(restriction as written, expanded expression)`` for those reading only ``names``."""
        known = set(names)
        return tuple(
            (text, expr)
            for text, expr in zip(self.restrictions, self.expanded(), strict=True)
            if set(expr.names) <= known
        )

    def violations(self, params: Mapping[str, int | float | str]) -> list[Violation]:
        """Restrictions that a candidate's parameters break, group by group.

        Args:
            params: the candidate's parameters, ``g<group>.<NAME>`` (a design's
                ``params_json``) or bare ``NAME`` for a single kernel.
        """
        groups: dict[str, dict[str, int | float | str]] = {}
        for key, value in params.items():
            group, _, name = key.rpartition(".")
            groups.setdefault(group, {})[name] = value
        found = []
        for group, env in sorted(groups.items()):
            for text, expr in self.applicable(env):
                if not bool(np.all(expr.evaluate(env))):
                    values = ", ".join(f"{n}={env[n]}" for n in sorted(expr.names))
                    where = f"group {group}: " if group else ""
                    found.append(Violation(CHECK, f"{where}{values} breaks `{text}`"))
        return found


def restrict_library(library: SkillLibrary, rules: SpaceRules) -> SkillLibrary:
    """``library`` with each skill also constrained by the restrictions that apply to it (those
    reading only its parameters), so tuning spaces built from it leave the rest out."""
    from kernelwright.skills.library import SkillLibrary

    if not rules:
        return library
    skills = []
    for skill in library:
        extra = [e.text for _, e in rules.applicable(p.name for p in skill.params)]
        added = tuple(e for e in extra if e not in skill.constraints)
        skills.append(dataclasses.replace(skill, constraints=skill.constraints + added))
    return SkillLibrary(skills)


def library_domains(library: SkillLibrary) -> dict[str, tuple[int, ...]]:
    """Each parameter name of the library with every value some skill gives it (sorted)."""
    found: dict[str, set[int]] = {}
    for skill in library:
        for p in skill.params:
            found.setdefault(p.name, set()).update(p.values)
    return {name: tuple(sorted(values)) for name, values in sorted(found.items())}
