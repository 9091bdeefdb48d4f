"""Searching the formulations of requirements that can be read several ways (MCTS over clauses).

    search(text, fixed, readings, domains, base) -> Searched

The vocabulary formulates what it understands (``fixed``); each fragment it did not gets the
readings an LLM restated it as (``readings[i]``, in the model's order, each already formulated
and checked by the vocabulary), plus the choice of leaving it to the person. A formulation
picks one reading per fragment. The tree decides the fragments in order, one level each:

    node         the clauses chosen so far, keyed by what they mean (below): two paths that
                 formulate the same model are one node, and its statistics are shared
    prior        a reading's share of 1 / (1 + its rank in the model's answer); leaving the
                 fragment to the person gets the share of the last rank + 1
    selection    PUCT: Q + c * prior * sqrt(N_parent) / (1 + N_child)
    rollout      the remaining fragments take their first reading
    value        0 when the model conflicts (the solver proves it); otherwise
                 0.8 * fragments formulated / fragments + 0.15 * mean prior of the readings
                 chosen + 0.05 * (1 - redundant restrictions / restrictions)

Meaning is decided by the solver, not the spelling: restrictions are keyed by the
configurations of the parameters' finite domains they admit (``BLOCK_M >= 64`` and
``BLOCK_M > 32`` over 16, 32, 64, 128 are one formulation), every other clause by its formal
text. The best formulation found is returned with, for each fragment read several ways, the
readings it did not take, so the person sees the choice before accepting the model.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kernelwright.constraints.clauses import Kind
from kernelwright.constraints.formulate import Formulation, assemble
from kernelwright.constraints.model import Constraints
from kernelwright.constraints.space_rules import SpaceRules
from kernelwright.constraints.vocabulary import Found
from kernelwright.tuning.restrictions import satisfied

EXPLORATION = 1.0
MAX_ITERATIONS = 256
MAX_CONFIGS = 200_000  # past this the restrictions are keyed by their text


@dataclass(frozen=True)
class Reading:
    """One way to formulate a fragment: the model's restatement and its clauses (None and no
    clauses: the fragment is left to the person)."""

    fragment: str
    restated: str | None
    found: tuple[Found, ...]
    rank: int


@dataclass
class Searched:
    """The best formulation found and how the search went."""

    formulation: Formulation
    chosen: tuple[Reading, ...]
    visited: int  # distinct formulations (by meaning) the search reached
    merged: int  # paths that reached a formulation already reached: pruned as one node


@dataclass
class _Node:
    depth: int
    visits: int = 0
    total: float = 0.0
    children: dict[int, str] = field(default_factory=dict)  # reading index -> child key


def search(
    text: str,
    fixed: Sequence[Found],
    readings: Sequence[Sequence[Reading]],
    domains: Mapping[str, Sequence[int]],
    base: Constraints | None = None,
    iterations: int = MAX_ITERATIONS,
) -> Searched:
    """The best formulation of ``text`` (see the module docstring)."""
    options = [[*r, Reading(r[0].fragment if r else "", None, (), len(r))] for r in readings]
    priors = [_priors(o) for o in options]
    cache: dict[tuple[int, ...], tuple[float, Formulation]] = {}
    nodes: dict[str, _Node] = {}
    paths_to: dict[str, set[tuple[int, ...]]] = {}

    def key_of(path: tuple[int, ...]) -> str:
        chosen = [f for d, i in enumerate(path) for f in options[d][i].found]
        return f"{len(path)}|{meaning_key([*fixed, *chosen], domains)}"

    def value_of(path: tuple[int, ...]) -> tuple[float, Formulation]:
        if path not in cache:
            cache[path] = _value(text, fixed, [options[d][i] for d, i in enumerate(path)],
                                 [priors[d][i] for d, i in enumerate(path)], domains, base)
        return cache[path]

    root = key_of(())
    nodes[root] = _Node(0)
    best: tuple[float, tuple[int, ...]] | None = None
    leaves = math.prod(len(o) for o in options)
    for _ in range(max(1, min(iterations, 4 * leaves))):
        path: tuple[int, ...] = ()
        trail = [root]
        node = nodes[root]
        while node.depth < len(options):  # selection and expansion, one level a step
            d = node.depth
            i = _select(node, nodes, priors[d])
            child_path = (*path, i)
            key = node.children.get(i) or key_of(child_path)
            node.children[i] = key
            paths_to.setdefault(key, set()).add(child_path)
            path = child_path
            trail.append(key)
            fresh = key not in nodes
            node = nodes.setdefault(key, _Node(d + 1))
            if fresh:
                break
        rollout = (*path, *([0] * (len(options) - len(path))))
        value, _ = value_of(rollout)
        if best is None or value > best[0]:
            best = (value, rollout)
        for key in trail:
            nodes[key].visits += 1
            nodes[key].total += value
    assert best is not None
    _, formulation = value_of(best[1])
    chosen = tuple(options[d][i] for d, i in enumerate(best[1]))
    merged = sum(len(p) - 1 for p in paths_to.values())
    notes = [_note(options[d], i) for d, i in enumerate(best[1]) if len(options[d]) > 2]
    formulation = dataclasses.replace(
        formulation, warnings=formulation.warnings + tuple(n for n in notes if n))
    return Searched(formulation, chosen, len(nodes), merged)


def meaning_key(found: Sequence[Found], domains: Mapping[str, Sequence[int]]) -> str:
    """What ``found`` says, independent of spelling: the configurations its restrictions
    admit over ``domains`` (by the solver's enumeration), and every other clause's formal
    text."""
    others = sorted({(f.clause.kind.value, f.clause.formal) for f in found
                     if not (f.clause.kind is Kind.RESTRICTION and f.restriction)})
    restrictions = tuple(dict.fromkeys(f.restriction for f in found if f.restriction))
    derived = tuple(dict(f.derived for f in found if f.derived).items())
    return f"{others}|{_admitted(restrictions, derived, domains)}"


def _admitted(restrictions: tuple[str, ...], derived: tuple[tuple[str, str], ...],
              domains: Mapping[str, Sequence[int]]) -> str:
    """The configurations ``restrictions`` admit, over the names that change the answer."""
    if not restrictions:
        return "all"
    exprs = SpaceRules(restrictions=restrictions, derived=derived).expanded()
    names = sorted({n for e in exprs for n in e.names})
    unknown = not names or any(n not in domains for n in names)
    if unknown or math.prod(len(domains[n]) for n in names) > MAX_CONFIGS:
        return "text:" + "|".join(sorted(restrictions))  # no finite space to compare over
    grids = np.meshgrid(*[np.asarray(domains[n]) for n in names], indexing="ij")
    mask = satisfied(exprs, {n: g.reshape(-1) for n, g in zip(names, grids, strict=True)})
    mask = mask.reshape(grids[0].shape)
    kept = []
    for axis, name in enumerate(names):  # a name whose value never matters is dropped
        if not bool(np.all(mask == np.take(mask, [0], axis=axis))):
            kept.append((axis, name))
    for axis in sorted((a for a in range(len(names)) if a not in {k for k, _ in kept}),
                       reverse=True):
        mask = np.take(mask, 0, axis=axis)
    label = ",".join(f"{n}={tuple(domains[n])}" for _, n in kept)
    return f"{label}:{np.packbits(mask.reshape(-1)).tobytes().hex()}:{mask.shape}"


def _priors(readings: Sequence[Reading]) -> list[float]:
    weights = [1.0 / (1 + r.rank) for r in readings]
    total = sum(weights)
    return [w / total for w in weights]


def _select(node: _Node, nodes: Mapping[str, _Node], priors: Sequence[float]) -> int:
    def score(i: int) -> float:
        child = nodes.get(node.children.get(i, ""))
        visits = child.visits if child else 0
        q = child.total / child.visits if child and child.visits else 0.0
        return q + EXPLORATION * priors[i] * math.sqrt(node.visits + 1) / (1 + visits)

    return max(range(len(priors)), key=lambda i: (score(i), -i))


def _value(text: str, fixed: Sequence[Found], chosen: Sequence[Reading], priors: Sequence[float],
           domains: Mapping[str, Sequence[int]], base: Constraints | None) -> tuple[float,
                                                                                    Formulation]:
    found = [*fixed, *(f for r in chosen for f in r.found)]
    left = [r.fragment for r in chosen if r.restated is None]
    formulation = assemble(text, found, left, domains, base)
    if not formulation.ok:
        return 0.0, formulation
    formulated = sum(r.restated is not None for r in chosen) / len(chosen) if chosen else 1.0
    prior = sum(priors) / len(priors) if priors else 1.0
    restrictions = [f for f in found if f.restriction]
    redundant = len(formulation.analysis.redundant) / len(restrictions) if restrictions else 0.0
    return 0.8 * formulated + 0.15 * prior + 0.05 * (1.0 - redundant), formulation


def _note(options: Sequence[Reading], i: int) -> str:
    """For a fragment read several ways: which reading was taken and which were not."""
    taken = options[i]
    others = [repr(r.restated) for r in options if r.restated is not None and r is not taken]
    if taken.restated is None:
        return (f"ambiguous: {taken.fragment!r} could be {' or '.join(others)}; left to you "
                "(no reading fits with the rest)")
    return (f"read {taken.fragment!r} as {taken.restated!r} (also possible: "
            f"{', '.join(others)}): edit the model to take another reading")
