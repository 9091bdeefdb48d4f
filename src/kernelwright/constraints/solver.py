"""Satisfiability, conflicts, redundancy and equivalence of space restrictions over finite domains.

    analyse(rules, domains) -> Analysis
        conflicts     smallest sets of restrictions no configuration satisfies together, by name
        redundant     restrictions implied by others (or true everywhere in the domains)
        equivalent    pairs that are the same formula (SymPy canonical form) or accept the same
                      configurations of the domains
        unchecked     restrictions reading a name with no known finite domain
        excluded      restrictions no value of the skills' parameters satisfies: not a conflict
                      between requirements, but the kernels with those parameters are ruled out

Every parameter has a finite domain (the skill library's values, or the ``domains`` the rules
declare), so the check is exact: restrictions are grouped by the names they share, each group's
Cartesian product is enumerated once, and each restriction becomes a boolean mask over it (the
whitelisted expression, vectorised). A conflict is shrunk to a minimal unsatisfiable subset by
deletion; a restriction is redundant when the ones kept so far accept no configuration it refuses.
A restriction that is unsatisfiable on its own over the skill library's values rules out the
kernels using those parameters (``tiles at most 512`` and a skill whose tiles start at 1024); over
domains the rules declare themselves, it is a conflict.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from kernelwright.constraints.expressions import equivalent
from kernelwright.constraints.space_rules import SpaceRules
from kernelwright.tuning.restrictions import Expression, satisfied

Mask = npt.NDArray[np.bool_]
MAX_CONFIGS = 2_000_000  # one group's product; larger ones are reported as unchecked


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the solver found (restrictions named by their text, as written)."""

    conflicts: tuple[tuple[str, ...], ...] = ()
    redundant: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (restriction, implied by)
    equivalent: tuple[tuple[str, str], ...] = ()
    unchecked: tuple[tuple[str, str], ...] = ()  # (restriction, why)
    excluded: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (restriction, the names it reads)
    sizes: dict[str, int] = field(default_factory=dict)  # restriction -> configs it accepts

    @property
    def ok(self) -> bool:
        """No conflict (redundancy and equivalence are only worth saying)."""
        return not self.conflicts

    def lines(self) -> list[str]:
        """One sentence per finding, for the command line and reports."""
        out = [f"conflict: {' and '.join(f'`{c}`' for c in group)} cannot all hold"
               for group in self.conflicts]  # fmt: skip
        for text, by in self.redundant:
            why = f"implied by {', '.join(f'`{b}`' for b in by)}" if by else "always true here"
            out.append(f"redundant: `{text}` ({why})")
        out += [f"equivalent: `{a}` and `{b}`" for a, b in self.equivalent]
        out += [f"not checked: `{text}` ({why})" for text, why in self.unchecked]
        out += [
            f"excludes: `{text}` holds for no value the skills give {', '.join(names)}: kernels "
            "with these parameters are never proposed"
            for text, names in self.excluded
        ]
        return out


def analyse(rules: SpaceRules, domains: Mapping[str, Sequence[int]]) -> Analysis:
    """Check ``rules``' restrictions over ``domains`` plus the domains the rules declare.

    Args:
        rules: the restrictions (derived quantities are written out first).
        domains: name -> finite values, usually :func:`.space_rules.library_domains`.
    """
    known = {**{k: tuple(v) for k, v in domains.items()}, **dict(rules.domains)}
    declared = {name for name, _ in rules.domains}
    texts, exprs = rules.restrictions, rules.expanded()
    unchecked: list[tuple[str, str]] = []
    checkable: list[int] = []
    for i, expr in enumerate(exprs):
        missing = [n for n in expr.names if n not in known]
        if missing:
            unchecked.append((texts[i], f"no finite domain for {', '.join(missing)}"))
        else:
            checkable.append(i)
    conflicts: list[tuple[str, ...]] = []
    redundant: list[tuple[str, tuple[str, ...]]] = []
    same: list[tuple[str, str]] = []
    sizes: dict[str, int] = {}
    excluded: list[tuple[str, tuple[str, ...]]] = []
    for group in _groups(checkable, exprs):
        names = sorted({n for i in group for n in exprs[i].names})
        n_configs = math.prod(len(known[n]) for n in names)
        if n_configs > MAX_CONFIGS:
            unchecked += [(texts[i], f"{n_configs} configurations to enumerate") for i in group]
            continue
        columns = _product(names, known)
        masks = {i: satisfied((exprs[i],), columns) for i in group}
        sizes.update({texts[i]: int(masks[i].sum()) for i in group})
        for i in [i for i in group if not masks[i].any() and not declared & set(exprs[i].names)]:
            excluded.append((texts[i], tuple(sorted(exprs[i].names))))
            group.remove(i)
        if not group:
            continue
        if not _all(masks, group).any():
            conflicts.append(tuple(texts[i] for i in _minimal_conflict(masks, group)))
            continue
        same += _equivalent_pairs(group, texts, exprs, masks, rules)
        dropped: set[int] = set()
        for i in group:
            others = [j for j in group if j != i and j not in dropped]
            if bool(np.all(masks[i][_all(masks, others)])):
                redundant.append((texts[i], tuple(texts[j] for j in _implying(masks, others, i))))
                dropped.add(i)
    return Analysis(
        tuple(conflicts), tuple(redundant), tuple(same), tuple(unchecked), tuple(excluded), sizes
    )


def _groups(indices: list[int], exprs: Sequence[Expression]) -> list[list[int]]:
    """Restrictions joined when they share a name (connected components), in input order."""
    parent = {i: i for i in indices}

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i in indices:
        for name in exprs[i].names:
            if name in owner:
                parent[root(i)] = root(owner[name])
            else:
                owner[name] = i
    groups: dict[int, list[int]] = {}
    for i in indices:
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def _product(names: list[str], domains: Mapping[str, tuple[int, ...]]) -> dict[str, Any]:
    rows = list(itertools.product(*(domains[n] for n in names)))
    return {n: np.array([r[k] for r in rows]) for k, n in enumerate(names)}


def _all(masks: Mapping[int, Mask], indices: Sequence[int]) -> Mask:
    size = len(next(iter(masks.values())))
    out = np.ones(size, dtype=bool)
    for i in indices:
        out &= masks[i]
    return out


def _minimal_conflict(masks: Mapping[int, Mask], group: list[int]) -> list[int]:
    """A minimal unsatisfiable subset: drop each restriction the conflict survives without."""
    core = list(group)
    for i in list(group):
        rest = [j for j in core if j != i]
        if rest and not _all(masks, rest).any():
            core = rest
    return core


def _implying(masks: Mapping[int, Mask], others: list[int], target: int) -> list[int]:
    """A minimal subset of ``others`` that still implies ``target`` (empty: always true)."""
    core = list(others)
    for j in list(others):
        rest = [k for k in core if k != j]
        if bool(np.all(masks[target][_all(masks, rest)])):
            core = rest
    return core


def _equivalent_pairs(
    group: list[int],
    texts: Sequence[str],
    exprs: Sequence[Expression],
    masks: Mapping[int, Mask],
    rules: SpaceRules,
) -> list[tuple[str, str]]:
    """Pairs over the same names with the same formula, or accepting the same configurations of
    the domains (restrictions on different names are never called equivalent)."""
    pairs = []
    for a, b in itertools.combinations(group, 2):
        if set(exprs[a].names) != set(exprs[b].names):
            continue
        same_set = bool(np.array_equal(masks[a], masks[b]))
        if same_set or equivalent(texts[a], texts[b], rules.derived_map):
            pairs.append((texts[a], texts[b]))
    return pairs
