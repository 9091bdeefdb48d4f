"""A structure's tunable parameters as a tuning ``Space``, so any tuning strategy can search them.

    DesignSpace.of(base, library)      the product of the skills' ``tune = true`` parameters of
                                       every group (current values included), restricted by the
                                       skills' constraints; parameters are named ``g<group>_<NAME>``
    DesignSpace.of(base, library, groups)   the same over some groups only (the others keep
                                       ``base``'s values)
    DesignSpace.of(..., shapes=...)    constraints that name group quantities (``REDUCED``,
                                       ``SMS``...) hold at those values; without them such a
                                       constraint restricts nothing
    focus_groups(base, library, weights)    the groups tuned together: all of them while their
                                       joint space stays enumerable, else the heaviest that fit
    .observations(tried, prior)        the structure's trials (and the archive's measurements of
                                       the same skills elsewhere) as the strategy's history
    .design(row)                       a suggestion back as a Design (stage "tuning")

The space is rebuilt from the design on every ask; equal spaces have equal fingerprints, so a
strategy's caches of model fits survive the rebuild.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from kernelwright.design.choices import Design, GroupChoice
from kernelwright.skills.library import SkillLibrary
from kernelwright.tuning.space import Kind, Param, Space
from kernelwright.tuning.strategies.base import Observation

Tried = tuple[Design, float | None]  # a design and its time (None: failed or refused)
Prior = Callable[[Design], Sequence[tuple[Mapping[str, int], float, str]]]
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
# Configurations tuned together at most: a strategy's table (and a GP's candidate set) holds them
# all, so a model of ten kernels (about 10^28 joint configurations) is tuned a few kernels at a
# time; two kernels of a few hundred configurations each still fit
MAX_JOINT_CONFIGS = 1 << 18
# Tuning trials a group gets before the next heaviest group's turn, when groups take turns
TRIALS_PER_GROUP = 4


def tunable(library: SkillLibrary, choice: GroupChoice) -> list[tuple[str, tuple[int, ...]]]:
    """(name, values) of the parameters stage 2 searches for one group (current value included)."""
    skill = library.get(choice.skill)
    found = []
    for p in skill.params:
        if not p.tune:
            continue
        values = set(p.values)
        if p.name in choice.params:
            values.add(int(choice.params[p.name]))
        found.append((p.name, tuple(sorted(values))))
    return found


def params_key(design: Design) -> str:
    """Structure and parameters: identifies a candidate before rendering."""
    return (
        design.structure_key()
        + "#"
        + ",".join(f"{k}={v}" for k, v in sorted(design.params_json().items()))
    )


@dataclass(frozen=True)
class DesignSpace:
    """The tunable parameters of ``base``'s structure (see the module docstring).

    Attributes:
        base: the design whose structure is tuned.
        space: the tuning space (empty ``params`` when nothing is tunable).
        names: (choice index, the skill's parameter name, the space's name) per parameter.
    """

    base: Design
    space: Space
    names: tuple[tuple[int, str, str], ...]

    @classmethod
    def of(
        cls, base: Design, library: SkillLibrary, groups: Collection[int] | None = None,
        shapes: Mapping[int, Mapping[str, int]] | None = None,
    ) -> DesignSpace:
        """The space of ``base``'s structure (of the choices for ``groups`` only, when given);
        its skills' constraints become restrictions, with each group's quantities
        (``shapes[group]``, ``GroupFacts.constraint_names``) as constants."""
        names: list[tuple[int, str, str]] = []
        params: list[Param] = []
        restrictions: list[str] = []
        for idx, choice in enumerate(base.choices):
            if groups is not None and choice.group not in groups:
                continue
            skill = library.get(choice.skill)
            mine: dict[str, str] = {}
            declared = {p.name: p.kind for p in skill.params}
            for name, values in tunable(library, choice):
                sname = f"g{choice.group}_{name}"
                mine[name] = sname
                names.append((idx, name, sname))
                if declared.get(name) == "categorical":  # a switch (0/1): no scale at all
                    params.append(Param(sname, values, Kind.CATEGORICAL))
                    continue
                pow2 = all(v > 0 and v & (v - 1) == 0 for v in values)
                kind = Kind.POW2 if pow2 and len(values) > 2 else Kind.INT
                # sizes act multiplicatively (log2 scale); a range reaching 0 cannot
                log = not pow2 and all(v > 0 for v in values)
                params.append(Param(sname, values, kind, log=log))
            fixed = {k: str(int(v)) for k, v in (shapes or {}).get(choice.group, {}).items()}
            fixed.update({k: str(int(v)) for k, v in choice.params.items() if k not in mine})
            for c in skill.constraints:
                used = {n for n in _NAME.findall(c) if not keyword.iskeyword(n)}  # not `or`
                if used & set(mine) and used <= set(mine) | set(fixed):
                    # a parameter the stage does not tune keeps its value: a constant here
                    restrictions.append(_rename(c, {**mine, **fixed}))
        return cls(base, Space(tuple(params), tuple(restrictions)), tuple(names))

    def config(self, design: Design) -> dict[str, int] | None:
        """``design``'s values of the tuned parameters; None for another structure, or for one
        whose untuned groups do not have ``base``'s values (its time is not this space's)."""
        if design.structure_key() != self.base.structure_key():
            return None
        tuned = {idx for idx, _, _ in self.names}
        for idx, (mine, theirs) in enumerate(zip(self.base.choices, design.choices, strict=True)):
            if idx not in tuned and dict(mine.params) != dict(theirs.params):
                return None
        cfg: dict[str, int] = {}
        for idx, pname, sname in self.names:
            if idx < len(design.choices) and pname in design.choices[idx].params:
                cfg[sname] = int(design.choices[idx].params[pname])
        return cfg

    def observations(self, tried: Sequence[Tried], prior: Prior | None) -> list[Observation]:
        """The strategy's history: the archive's measurements of the same skills on other tasks
        (labelled by source, in the order found), then this structure's trials in order."""
        history: list[Observation] = []
        by_source: dict[str, list[tuple[Mapping[str, int], float]]] = {}
        for values, prior_ms, source in prior(self.base) if prior else ():
            by_source.setdefault(source, []).append((values, prior_ms))
        names = {sname for _, _, sname in self.names}
        # a group's measurement elsewhere, as this space's row: its tuned parameters, the
        # base's for the other groups tuned here (a source's rows then differ where its timings
        # do); one whose untuned parameters differ from the base's measured something else
        base = self.config(self.base) or {}
        fixed = {f"g{c.group}_{k}": v for c in self.base.choices for k, v in c.params.items()}
        for source, rows in by_source.items():
            for values, prior_ms in rows:
                if not set(values) & names or any(
                        fixed.get(k) != v for k, v in values.items() if k not in names):
                    continue
                found = self.space.index({**base, **values})
                if found is not None:
                    ok = prior_ms is not None and math.isfinite(prior_ms) and prior_ms > 0
                    time_ms = float(prior_ms) if ok else None
                    history.append(Observation(found, time_ms, f"archive:{source}"))
        for design, ms in tried:
            config = self.config(design)
            row = self.space.index(config) if config is not None else None
            if row is not None:
                history.append(Observation(row, ms))
        return history

    def design(self, row: int) -> Design:
        """The design with ``base``'s structure and the values of ``row``."""
        cfg = self.space.config(row)
        choices = list(self.base.choices)
        for idx, pname, sname in self.names:
            old = choices[idx]
            choices[idx] = old.with_params({**old.params, pname: int(cfg[sname])})
        return Design(tuple(choices), stage="tuning")


def focus_groups(
    base: Design,
    library: SkillLibrary,
    weights: Mapping[int, float] | None = None,
    limit: int | None = None,
    tried: Sequence[Tried] = (),
) -> set[int] | None:
    """The groups whose parameters are tuned together: None (all) when their joint space has at
    most ``limit`` (default :data:`MAX_JOINT_CONFIGS`) configurations; else the heaviest groups
    by ``weights`` (an estimate of each group's share of the run time; the design's order when
    absent) whose joint space fits, and at least the heaviest one. A group already given
    :data:`TRIALS_PER_GROUP` trials around ``base`` (``tried``) yields to the next heaviest, so a
    long run moves on to lighter kernels; when every group has had its share, the order restarts."""
    limit = MAX_JOINT_CONFIGS if limit is None else limit
    sizes = {
        c.group: math.prod(len(values) for _, values in tunable(library, c)) for c in base.choices
    }
    if math.prod(sizes.values()) <= limit:
        return None
    tunable_groups = [g for g in sizes if sizes[g] > 1]
    order = sorted(tunable_groups, key=lambda g: -(weights or {}).get(g, 0.0))  # stable
    spent = trials_by_group(base, tried)
    rounds = min((spent.get(g, 0) for g in order), default=0) // TRIALS_PER_GROUP
    # the groups that have had fewer rounds than the rest come first, heaviest first
    order.sort(key=lambda g: spent.get(g, 0) // TRIALS_PER_GROUP > rounds)
    chosen: set[int] = set()
    joint = 1
    for g in order:
        if chosen and joint * sizes[g] > limit:
            continue
        chosen.add(g)
        joint *= sizes[g]
    return chosen


def trials_by_group(base: Design, tried: Sequence[Tried]) -> dict[int, int]:
    """Per group, the trials of ``base``'s structure that differ from ``base`` in that group's
    parameters only."""
    counts: dict[int, int] = {}
    for design, _ in tried:
        if design.structure_key() != base.structure_key():
            continue
        changed = [
            mine.group
            for mine, theirs in zip(base.choices, design.choices, strict=True)
            if dict(mine.params) != dict(theirs.params)
        ]
        if len(changed) == 1:
            counts[changed[0]] = counts.get(changed[0], 0) + 1
    return counts


def _rename(expr: str, names: Mapping[str, str]) -> str:
    """Replace each parameter name in a constraint by its name in the tuner's space."""
    return _NAME.sub(lambda m: names.get(m.group(0), m.group(0)), expr)
