"""Kernel discovery: evolutionary search over kernel expressions, ranked by exact LOO-CRPS.

    population <- seeds (the GPU-aware kernel, the default kernel, ...)
    repeat `generations` times:
        offspring <- proposer.propose(parents, n)          grammar mutations, or an LLM
        for each new expression: MAP-fit its hyperparameters, score mean LOO-CRPS (gp.loo)
        population <- the best `population` of parents + offspring      (mu + lambda)
    return the best-scoring expression

LOO-CRPS scores the calibrated leave-one-out predictive distribution, so an expression that
fits the data by memorising it (short length-scales everywhere, tiny noise) scores badly, and
a small complexity penalty per hyperparameter breaks ties towards simpler expressions.

A :class:`KernelProposer` suggests new expressions from scored parents. The default,
:class:`GrammarMutations`, edits trees: change a base kernel's family, add/drop/re-warp a
feature, add or multiply in a new base kernel (an interaction), drop a term, cross two parents.
An LLM-backed proposer implements the same one method and plugs in unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from kernelwright.tuning.gp.features import Feature, FeatureTable, structured_features
from kernelwright.tuning.gp.kernels import Base, Kernel, Product, Sum, size
from kernelwright.tuning.gp.loo import loo_crps
from kernelwright.tuning.gp.model import Hypers, fit
from kernelwright.tuning.space import Kind, Space

FloatArray = npt.NDArray[np.float64]
Rows = npt.NDArray[np.intp]


@dataclass(frozen=True)
class Scored:
    """A kernel expression with its fitted hyperparameters and scores.

    Attributes:
        kernel: the expression.
        crps: mean LOO-CRPS of the MAP fit (standardised targets; lower is better).
        fitness: crps plus the complexity penalty (what selection ranks by).
        hypers: the MAP hyperparameters.
    """

    kernel: Kernel
    crps: float
    fitness: float
    hypers: Hypers | None

    def __str__(self) -> str:
        return f"{self.crps:.4f}  {self.kernel}"


class KernelProposer(Protocol):
    """Suggests new kernel expressions from scored parents."""

    def propose(self, parents: Sequence[Scored], n: int, rng: np.random.Generator) -> list[Kernel]:
        """Up to ``n`` new expressions (duplicates of known ones are dropped by the caller).

        Args:
            parents: the current population, best first.
            n: how many to propose.
            rng: the only source of randomness.
        """
        ...


@dataclass(frozen=True)
class DiscoverySettings:
    """Budget of one discovery run.

    Attributes:
        generations: rounds of proposal and selection.
        population: survivors per round.
        offspring: proposals per round (defaults to ``population``).
        max_size: most base kernels in one expression.
        max_iter: L-BFGS-B iterations per hyperparameter fit.
        penalty: added to LOO-CRPS per hyperparameter.
    """

    generations: int = 6
    population: int = 12
    offspring: int | None = None
    max_size: int = 5
    max_iter: int = 40
    penalty: float = 1e-3


@dataclass(frozen=True)
class DiscoveryResult:
    """Everything a discovery run scored, best first."""

    scored: tuple[Scored, ...]

    @property
    def best(self) -> Scored:
        """The winner."""
        return self.scored[0]

    def score_of(self, kernel: Kernel) -> Scored | None:
        """The entry for ``kernel`` if it was scored (seeds always are)."""
        text = str(kernel)
        return next((s for s in self.scored if str(s.kernel) == text), None)


def score_kernel(
    kernel: Kernel,
    table: FeatureTable,
    rows: Rows,
    y: FloatArray,
    *,
    extra_noise: FloatArray | None = None,
    max_iter: int = 40,
    penalty: float = 1e-3,
) -> Scored:
    """MAP-fit ``kernel`` and score its LOO-CRPS (inf when the fit breaks down)."""
    try:
        gp = fit(kernel, table, rows, y, extra_noise=extra_noise, max_iter=max_iter)
        crps = loo_crps(gp)
    except (np.linalg.LinAlgError, ValueError, FloatingPointError):
        return Scored(kernel, math.inf, math.inf, None)
    if not math.isfinite(crps):
        return Scored(kernel, math.inf, math.inf, None)
    return Scored(kernel, crps, crps + penalty * gp.hypers.flat().size, gp.hypers)


def discover(
    table: FeatureTable,
    rows: Rows,
    y: FloatArray,
    *,
    seeds: Sequence[Kernel],
    rng: np.random.Generator,
    extra_noise: FloatArray | None = None,
    settings: DiscoverySettings = DiscoverySettings(),
    proposer: KernelProposer | None = None,
) -> DiscoveryResult:
    """Evolve kernel expressions on data ``(rows, y)`` of ``table.space``; see module docstring.

    Args:
        table: feature columns of the space.
        rows: `(n,)` rows with observations.
        y: `(n,)` standardised targets (log time).
        seeds: starting expressions (always scored, so the result says how they compare).
        rng: randomness for the proposer.
        extra_noise: `(n,)` per-point extra noise (warm-start data).
        settings: budget.
        proposer: defaults to :class:`GrammarMutations` over the space's features.
    """
    proposer = proposer or GrammarMutations.for_space(table.space)
    known: dict[str, Scored] = {}

    def score_all(kernels: Sequence[Kernel], seeds: bool = False) -> None:
        for k in kernels:
            text = str(k)
            if text in known:
                continue
            too_big = size(k) > settings.max_size or k.n_hyper + 2 > max(4, len(y) // 2)
            if too_big and not seeds:  # seeds are always scored, so the result can compare them
                continue
            known[text] = score_kernel(
                k,
                table,
                rows,
                y,
                extra_noise=extra_noise,
                max_iter=settings.max_iter,
                penalty=settings.penalty,
            )

    score_all(list(seeds), seeds=True)
    population = _ranked(known.values())[: settings.population]
    for _ in range(settings.generations):
        children = proposer.propose(population, settings.offspring or settings.population, rng)
        score_all(children)
        population = _ranked(known.values())[: settings.population]
    return DiscoveryResult(tuple(_ranked(known.values())))


def _ranked(scored: Iterable[Scored]) -> list[Scored]:
    return sorted(scored, key=lambda s: (s.fitness, str(s.kernel)))


@dataclass(frozen=True)
class GrammarMutations:
    """The default proposer: random edits of expression trees over a feature vocabulary.

    Attributes:
        numeric: features continuous base kernels may use (sizes, products, on log2 or linear).
        categorical: features the categorical kernel may use (flags, and sizes seen as categories).
    """

    numeric: tuple[Feature, ...]
    categorical: tuple[Feature, ...]

    @classmethod
    def for_space(cls, space: Space) -> GrammarMutations:
        """Vocabulary from the space: structured features, both warps, sizes as categories too."""
        numeric, categorical = structured_features(space)
        extra_num = [
            Feature(f.params, "lin") for f in numeric if f.warp == "log2" and len(f.params) == 1
        ]
        extra_cat = [
            Feature((p.name,), "cat")
            for p in space.params
            if p.kind is not Kind.CATEGORICAL and 1 < len(p.values) <= 8
        ]
        return cls(
            tuple(dict.fromkeys([*numeric, *extra_num])),
            tuple(dict.fromkeys([*categorical, *extra_cat])),
        )

    def propose(self, parents: Sequence[Scored], n: int, rng: np.random.Generator) -> list[Kernel]:
        """``n`` mutants of tournament-selected parents (see class docstring)."""
        out: list[Kernel] = []
        if not parents:
            return out
        for _ in range(n):
            parent = _tournament(parents, rng).kernel
            op = int(rng.integers(7))
            if op == 6 and len(parents) > 1:
                other = _tournament(parents, rng).kernel
                child: Kernel = _join(parent, _random_subtree(other, rng), bool(rng.integers(2)))
            elif op == 5:
                child = _join(parent, self._random_base(rng), True)
            elif op == 4:
                child = _join(parent, self._random_base(rng), False)
            else:
                child = self._edit_random_base(parent, op, rng)
            out.append(_simplify(child))
        return out

    def _random_base(self, rng: np.random.Generator) -> Base:
        if self.categorical and (not self.numeric or rng.random() < 0.3):
            k = int(rng.integers(1, min(2, len(self.categorical)) + 1))
            idx = rng.choice(len(self.categorical), size=k, replace=False)
            return Base("cat", tuple(self.categorical[i] for i in sorted(idx)))
        k = int(rng.integers(1, min(3, len(self.numeric)) + 1))
        idx = rng.choice(len(self.numeric), size=k, replace=False)
        family = ("m52", "m32", "se")[int(rng.integers(3))]
        return Base(family, tuple(self.numeric[i] for i in sorted(idx)))  # type: ignore[arg-type]

    def _edit_random_base(self, kernel: Kernel, op: int, rng: np.random.Generator) -> Kernel:
        bases = _bases(kernel)
        target = bases[int(rng.integers(len(bases)))]
        vocab = self.categorical if target.family == "cat" else self.numeric
        feats = list(target.features)
        if op == 0 and target.family != "cat":  # change family
            families = [f for f in ("m52", "m32", "se") if f != target.family]
            new: Base | None = Base(families[int(rng.integers(len(families)))], target.features)  # type: ignore[arg-type]
        elif op == 1 and len(feats) > 1:  # drop a feature
            feats.pop(int(rng.integers(len(feats))))
            new = Base(target.family, tuple(feats))
        elif op == 2:  # add a feature
            choices = [f for f in vocab if f not in feats]
            new = (
                Base(target.family, (*feats, choices[int(rng.integers(len(choices)))]))
                if choices
                else None
            )
        else:  # remove this base from its sum/product, or re-warp one of its features
            if len(bases) > 1 and rng.random() < 0.5:
                return _replace(kernel, target, None) or kernel
            i = int(rng.integers(len(feats)))
            f = feats[i]
            if f.warp in ("log2", "lin"):
                feats[i] = Feature(f.params, "lin" if f.warp == "log2" else "log2")
            new = Base(target.family, tuple(feats))
        if new is None:
            return kernel
        return _replace(kernel, target, new) or kernel


def _tournament(parents: Sequence[Scored], rng: np.random.Generator, k: int = 2) -> Scored:
    idx = rng.choice(len(parents), size=min(k, len(parents)), replace=False)
    return min((parents[int(i)] for i in idx), key=lambda s: s.fitness)


def _bases(kernel: Kernel) -> list[Base]:
    if isinstance(kernel, Base):
        return [kernel]
    children = kernel.terms if isinstance(kernel, Sum) else kernel.factors
    return [b for c in children for b in _bases(c)]


def _random_subtree(kernel: Kernel, rng: np.random.Generator) -> Kernel:
    nodes: list[Kernel] = []

    def walk(k: Kernel) -> None:
        nodes.append(k)
        if not isinstance(k, Base):
            for c in k.terms if isinstance(k, Sum) else k.factors:
                walk(c)

    walk(kernel)
    return nodes[int(rng.integers(len(nodes)))]


def _join(a: Kernel, b: Kernel, product: bool) -> Kernel:
    return Product((a, b)) if product else Sum((a, b))


def _replace(kernel: Kernel, old: Base, new: Base | None) -> Kernel | None:
    """``kernel`` with the first occurrence of ``old`` replaced by ``new`` (None removes it)."""
    done = False

    def go(k: Kernel) -> Kernel | None:
        nonlocal done
        if not done and k is old:
            done = True
            return new
        if isinstance(k, Base):
            return k
        children = [
            c
            for c in (go(c) for c in (k.terms if isinstance(k, Sum) else k.factors))
            if c is not None
        ]
        if not children:
            return None
        if len(children) == 1:
            return children[0]
        return Sum(tuple(children)) if isinstance(k, Sum) else Product(tuple(children))

    return go(kernel)


def _simplify(kernel: Kernel) -> Kernel:
    """Flatten nested sums and products; merge same-family bases in a product (one ARD base)."""
    if isinstance(kernel, Base):
        return kernel
    is_sum = isinstance(kernel, Sum)
    flat: list[Kernel] = []
    for c in kernel.terms if isinstance(kernel, Sum) else kernel.factors:
        c = _simplify(c)
        if is_sum and isinstance(c, Sum):
            flat.extend(c.terms)
        elif not is_sum and isinstance(c, Product):
            flat.extend(c.factors)
        else:
            flat.append(c)
    if not is_sum:  # k(A) * k(B) of one family on disjoint features is k(A u B) for SE/Cat only
        merged: dict[str, Base] = {}
        rest: list[Kernel] = []
        for c in flat:
            if isinstance(c, Base) and c.family in ("se", "cat"):
                prev = merged.get(c.family)
                feats = (*prev.features, *c.features) if prev else c.features
                merged[c.family] = Base(c.family, tuple(dict.fromkeys(feats)))
            else:
                rest.append(c)
        flat = [*rest, *merged.values()]
    if len(flat) == 1:
        return flat[0]
    return Sum(tuple(flat)) if is_sum else Product(tuple(flat))
