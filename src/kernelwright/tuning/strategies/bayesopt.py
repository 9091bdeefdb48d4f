"""Bayesian optimisation over a constrained discrete space: the loop as plain calls.

    history -> targets (log time, standardised per source) -> fit GP (MAP, memoised by prefix)
            -> candidates (valid, unevaluated) -> log EI + log P(runs) -> kriging-believer batch

Five registered variants share this loop:

    bo             the GPU-aware kernel (gp.library.gpu_kernel), log time, feasibility-weighted EI,
                   Latin-hypercube initial design
    bo-local       as bo, but a lower confidence bound (mean - 1 sd) replaces EI, and once 5
                   evaluations in a row bring no improvement the candidates are only configs that
                   differ from the fastest one in at most 2 parameters (a trust region in the
                   discrete valid set, tuning.neighbourhood), until an evaluation improves
    bo-select      as bo, but the kernel is chosen per space by exact LOO-CRPS among the library's
                   kernels (and discovered ones handed over) once enough timings exist, re-chosen
                   as they arrive (gp.selection)
    bo-discovered  as bo, but the kernel is re-discovered from the run's own observations by
                   evolutionary search ranked by LOO-CRPS (tuning.discovery) as data arrives
    gp-default     the usual default: Matérn-5/2 ARD on min-max scaled raw parameters, standardised
                   raw time, plain EI (failures dropped), random initial design

Hyperparameters are refitted at a schedule of history lengths, each fit starting from the prior
mean and from the previous scheduled fit; the memo of fits is a cache of a pure function of the
history, so a resumed run rebuilds it and suggests exactly what an uninterrupted run would.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
import scipy.stats

from kernelwright.tuning.gp.acquisition import select
from kernelwright.tuning.gp.features import FeatureTable
from kernelwright.tuning.gp.kernels import Base, Kernel, Product, Sum
from kernelwright.tuning.gp.library import default_kernel, gpu_kernel
from kernelwright.tuning.gp.model import GP, Hypers, condition, fit
from kernelwright.tuning.gp.selection import KernelChoice, choose_kernel, library_candidates
from kernelwright.tuning.initial import design_pool, latin_hypercube, maximin
from kernelwright.tuning.neighbourhood import evaluations_since_improvement, value_codes, within
from kernelwright.tuning.space import Space
from kernelwright.tuning.strategies.base import Observation, step_rng, unevaluated

FloatArray = npt.NDArray[np.float64]

PRIOR_NOISE = 0.1  # extra noise variance (standardised units) on warm-start observations

# Kernel selection starts at this many successful timings of the run: the LOO-CRPS of fewer
# points differs between kernels by less than its own spread, so the choice would be noise.
SELECT_FROM = 12
# ...and is re-made every this many further successful timings: each selection fits every
# candidate once, so its cost stays a fixed fraction of the run's refits.
RESELECT_EVERY = 6


def agreeing_priors(own: Sequence[Observation], priors: Sequence[Observation]) -> list[Observation]:
    """The prior observations of every source that has not been contradicted here: a source is
    dropped when each of its configs this run measured (the warm start tries its best first)
    ran slower than the median of the run's other successful measurements, or failed. Its
    fast configs are then another GPU's or shape's, and a GP trained on them would keep
    proposing their neighbours. A source with no config measured here, or a run with fewer
    than two other measurements, is kept."""
    kept: list[Observation] = []
    by_source: dict[str, list[Observation]] = {}
    for o in priors:
        by_source.setdefault(o.source, []).append(o)
    for obs in by_source.values():
        rows = {o.row for o in obs}
        tried = [o for o in own if o.row in rows]
        others = sorted(o.time_ms for o in own if o.row not in rows and o.time_ms is not None)
        if tried and len(others) >= 2:
            median = others[len(others) // 2]
            if all(o.time_ms is None or o.time_ms > median for o in tried):
                continue
        kept += obs
    return kept


@dataclass(frozen=True)
class BOSettings:
    """Knobs of the loop (defaults are the ``bo`` strategy's).

    Attributes:
        kernel: ``"gpu"``, ``"default"``, ``"discovered"`` or ``"select"`` (chosen by
            LOO-CRPS among the library's kernels and ``BayesOpt.discovered``).
        target: what the GP models: ``log`` time, ``raw`` time, ``log-winsor`` (log time with
            the slow half clipped at the median: the model spends itself on the fast region), or
            ``rank`` (normal scores of the ranks).
        feasibility: weight EI by the probability that a config runs.
        initial: ``"maximin"`` or ``"random"`` initial design.
        n_init: evaluations in the initial design (halved when prior observations exist).
        dense_until: refit hyperparameters after every evaluation until this many.
        refit_every: then refit every this many evaluations (conditioning in between).
        max_iter: L-BFGS-B iteration cap per fit.
        max_candidates: acquisition scores at most this many unevaluated configs (a seeded
            subsample).
        acquisition: ``"ei"`` (log expected improvement) or ``"lcb:<beta>"`` (minus the lower
            confidence bound mu - beta sd); either plus log P(runs).
        discover_at: own-data sizes at which ``"discovered"`` re-runs kernel discovery.
        discovery_generations: generations per discovery run.
        discovery_population: population size per discovery run.
        select_from: successful timings before ``"select"`` chooses (the GPU-aware kernel
            before that).
        reselect_every: ``"select"`` re-chooses after every this many further successes.
        local_radius: once the run stalls, candidates are restricted to configs that differ
            from an incumbent in at most this many parameters (0: never restricted).
        local_patience: the run has stalled when this many evaluations followed its fastest.
        local_centres: how many of the fastest configs are incumbents.
        prior_check: once the initial design is measured, drop a prior source whose best
            configs, measured here, all ran slower than the median of the run's other
            measurements (the prior is another GPU's or shape's, and misleads here); a run
            left without priors completes the full initial design.
    """

    kernel: Literal["gpu", "default", "discovered", "select"] = "gpu"
    target: Literal["log", "raw", "log-winsor", "rank"] = "log"
    feasibility: bool = True
    initial: Literal["lhs", "maximin", "random"] = "lhs"
    n_init: int = 10
    design_pool: int = 4000
    dense_until: int = 25
    refit_every: int = 3
    max_iter: int = 40
    max_candidates: int = 20000
    acquisition: str = "ei"
    discover_at: tuple[int, ...] = (15, 30, 50)
    discovery_generations: int = 4
    discovery_population: int = 12
    select_from: int = SELECT_FROM
    reselect_every: int = RESELECT_EVERY
    local_radius: int = 0
    local_patience: int = 5
    local_centres: int = 1
    prior_check: bool = True


@dataclass
class BayesOpt:
    """The BO strategy (see module docstring). ``_memo`` only caches pure results.

    ``discovered`` holds kernel expressions (a discovery run's best, say) that ``"select"``
    weighs against the library's; those reading parameters the space lacks are ignored.
    """

    name: str = "bo"
    settings: BOSettings = field(default_factory=BOSettings)
    discovered: tuple[Kernel, ...] = ()
    _memo: dict[object, object] = field(default_factory=dict, repr=False)
    _tables: dict[int, FeatureTable] = field(default_factory=dict, repr=False)  # by fingerprint

    def ask(self, space: Space, history: Sequence[Observation], n: int, seed: int) -> list[int]:
        """Up to ``n`` unevaluated rows: initial design first, then feasibility-weighted EI."""
        with _single_threaded_blas():
            return self._ask(space, history, n, seed)

    # -- the loop ---------------------------------------------------------------------------

    def _ask(self, space: Space, history: Sequence[Observation], n: int, seed: int) -> list[int]:
        s = self.settings
        table = self._table(space)
        own = [o for o in history if not o.source]
        priors = [o for o in history if o.source]
        free = unevaluated(space, history)
        if len(free) == 0 or n <= 0:
            return []
        rng = step_rng(seed, history)
        n_init = max(2, s.n_init // 2) if priors else s.n_init
        if priors and s.prior_check and len(own) >= n_init:
            priors = agreeing_priors(own, priors)
            if not priors:  # a run on its own again: the whole initial design
                n_init = s.n_init
        n_ok = sum(not o.failed for o in own)
        out: list[int] = []
        if len(own) < n_init or n_ok < 2:
            out = self._initial(
                space, table, own, priors, free, min(n, max(1, n_init - len(own))), seed, rng
            )
            if len(out) >= n:
                return out[:n]
        free = np.setdiff1d(free, out)
        data = self._training_data(own, priors)
        if data is None or len(free) == 0:
            return out + [
                int(r) for r in rng.choice(free, size=min(n - len(out), len(free)), replace=False)
            ]
        rows, y, extra, best = data
        kernel = self._kernel(space, table, own, priors, seed)
        hypers = self._hypers(kernel, table, own, priors)
        try:
            gp = self._condition(kernel, hypers, table, rows, y, extra)
        except np.linalg.LinAlgError:
            return out + [
                int(r) for r in rng.choice(free, size=min(n - len(out), len(free)), replace=False)
            ]
        cand = self._trust_region(space, own, free)
        if len(cand) > s.max_candidates:
            cand = np.sort(rng.choice(cand, size=s.max_candidates, replace=False))
        evaluated = np.array([o.row for o in own], dtype=np.intp)
        ok = np.array([not o.failed for o in own])
        out += self._select(gp, cand, n - len(out), best, evaluated, ok)
        return out

    def _trust_region(
        self, space: Space, own: list[Observation], free: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.intp]:
        """The candidates: every free row, or, once the run has stalled, those near an incumbent
        (all of them again when that neighbourhood is exhausted)."""
        s = self.settings
        if s.local_radius <= 0:
            return free
        if evaluations_since_improvement([o.time_ms for o in own]) < s.local_patience:
            return free
        timed = sorted((o for o in own if not o.failed), key=lambda o: o.time_ms or 0.0)
        centres = [o.row for o in timed[: max(1, s.local_centres)]]
        codes = self._memo.get(("codes", space.fingerprint))
        if codes is None:
            codes = self._memo[("codes", space.fingerprint)] = value_codes(space)
        assert isinstance(codes, np.ndarray)
        near = free[within(codes, free, centres, s.local_radius)]
        return near if len(near) else free

    # -- the GP's numerical work (a subclass may hand it to another library) ----------------

    def _fit(
        self,
        kernel: Kernel,
        table: FeatureTable,
        data: tuple[npt.NDArray[np.intp], FloatArray, FloatArray],
        starts: tuple[Hypers, ...],
        from_prior: bool,
    ) -> Hypers:
        """MAP hyperparameters from the prior mean (when ``from_prior``) and ``starts``."""
        rows, y, extra = data
        return fit(
            kernel,
            table,
            rows,
            y,
            extra_noise=extra,
            starts=starts,
            max_iter=self.settings.max_iter,
            from_prior=from_prior,
        ).hypers

    def _condition(
        self,
        kernel: Kernel,
        hypers: Hypers,
        table: FeatureTable,
        rows: npt.NDArray[np.intp],
        y: FloatArray,
        extra: FloatArray,
    ) -> GP:
        """The posterior at fixed hyperparameters."""
        return condition(kernel, hypers, table, rows, y, extra)

    def _select(
        self,
        gp: GP,
        cand: npt.NDArray[np.intp],
        q: int,
        best: float,
        evaluated: npt.NDArray[np.intp],
        ok: npt.NDArray[np.bool_],
    ) -> list[int]:
        """q candidate rows by the acquisition."""
        s = self.settings
        return select(
            gp,
            cand,
            q,
            best=best,
            evaluated=evaluated,
            ok=ok,
            use_feasibility=s.feasibility,
            kind=s.acquisition,
        )

    def _initial(
        self,
        space: Space,
        table: FeatureTable,
        own: list[Observation],
        priors: list[Observation],
        free: npt.NDArray[np.intp],
        n: int,
        seed: int,
        rng: np.random.Generator,
    ) -> list[int]:
        s = self.settings
        done = {o.row for o in own}
        picks: list[int] = []
        if priors:  # warm start: the best prior configs first (lowest per-source z-score)
            z = _standardise_by_source([o for o in priors if not o.failed], self.settings.target)
            for _, row in sorted(zip(z, [o.row for o in priors if not o.failed], strict=True)):
                if row not in done and row not in picks and len(picks) < max(1, n // 2):
                    picks.append(row)
        if len(picks) < n:
            if s.initial == "lhs":
                picks += self._lhs(table, own, picks, n, seed)
            elif s.initial == "random":
                rest = np.setdiff1d(free, picks)
                picks += [
                    int(r)
                    for r in rng.choice(rest, size=min(n - len(picks), len(rest)), replace=False)
                ]
            else:
                existing = np.array([o.row for o in own] + picks, dtype=np.intp)
                picks += maximin(
                    table,
                    existing,
                    done | set(picks),
                    n - len(picks),
                    rng,
                    design_pool(space, seed, s.design_pool),
                )
        return picks

    def _lhs(
        self, table: FeatureTable, own: list[Observation], picks: list[int], n: int, seed: int
    ) -> list[int]:
        """The next rows of one Latin-hypercube design per run (fixed by the seed)."""
        size = max(self.settings.n_init, 1)
        key = ("lhs", table.space.fingerprint, seed, size)
        design = self._memo.get(key)
        if design is None:
            design = latin_hypercube(
                table, set(), size, np.random.default_rng([seed & 0xFFFFFFFF, 0x1A5])
            )
            self._memo[key] = design
        assert isinstance(design, list)
        done = {o.row for o in own} | set(picks)
        todo = [r for r in design if r not in done]
        return todo[: n - len(picks)]

    def _training_data(
        self, own: list[Observation], priors: list[Observation]
    ) -> tuple[npt.NDArray[np.intp], FloatArray, FloatArray, float] | None:
        good = [o for o in own if not o.failed]
        prior_ok = [o for o in priors if not o.failed]
        if len(good) < 2:
            return None
        obs = good + prior_ok
        y = _standardise_by_source(obs, self.settings.target)
        rows = np.array([o.row for o in obs], dtype=np.intp)
        extra = np.array([0.0] * len(good) + [PRIOR_NOISE] * len(prior_ok))
        return rows, y, extra, float(np.min(y[: len(good)]))

    # -- memoised pure functions of the history ---------------------------------------------

    def _table(self, space: Space) -> FeatureTable:
        """Feature columns, shared by equal spaces (callers may rebuild the space every ask)."""
        table = self._tables.get(space.fingerprint)
        if table is None:
            if len(self._tables) >= 8:  # bounded: a long session tunes many spaces
                self._tables.pop(next(iter(self._tables)))
            table = self._tables[space.fingerprint] = FeatureTable(space)
        return table

    def _cached(self, key: object, make: Callable[[], Kernel]) -> Kernel:
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = make()
        assert isinstance(found, Base | Sum | Product)
        return found

    def _fit_points(self, n_own: int) -> list[int]:
        s = self.settings
        pts = list(range(2, min(n_own, s.dense_until) + 1))
        pts += list(range(s.dense_until + s.refit_every, n_own + 1, s.refit_every))
        return pts

    def _hypers(
        self, kernel: Kernel, table: FeatureTable, own: list[Observation], priors: list[Observation]
    ) -> Hypers:
        """MAP hyperparameters fitted at the latest scheduled prefix of the own observations."""
        previous: Hypers | None = None
        result: Hypers | None = None
        for i, m in enumerate(self._fit_points(len(own))):
            prefix = own[:m]
            data = self._training_data(prefix, priors)
            if data is None:
                continue
            key = ("fit", table.space.fingerprint, str(kernel), tuple(prefix), tuple(priors))
            cached = self._memo.get(key)
            if cached is None:
                rows, y, extra, _ = data
                starts = () if previous is None else (previous,)
                # restart from the prior now and then (local optima)
                cached = self._fit(kernel, table, (rows, y, extra), starts, i % 4 == 0)
                self._memo[key] = cached
            assert isinstance(cached, Hypers)
            previous = result = cached
        if result is None:  # fewer observations than the first scheduled fit: fit them all
            data = self._training_data(own, priors)
            assert data is not None, "the caller checked there are >= 2 successes"
            rows, y, extra, _ = data
            result = self._fit(kernel, table, (rows, y, extra), (), True)
        return result

    def _kernel(
        self,
        space: Space,
        table: FeatureTable,
        own: list[Observation],
        priors: list[Observation],
        seed: int,
    ) -> Kernel:
        s = self.settings
        if s.kernel == "default":
            return self._cached(("default", space.fingerprint), lambda: default_kernel(space))
        base = self._cached(("gpu", space.fingerprint), lambda: gpu_kernel(space))
        if s.kernel == "gpu":
            return base
        if s.kernel == "select":
            choice = self._choice(space, table, own, priors)
            return base if choice is None else choice.kernel
        points = [
            m for m in s.discover_at if sum(not o.failed for o in own[:m]) >= 8 and m <= len(own)
        ]
        if not points:
            return base
        m = points[-1]
        key = ("discover", space.fingerprint, tuple(own[:m]), tuple(priors), seed, m)
        found = self._memo.get(key)
        if found is None:
            from kernelwright.tuning.discovery import DiscoverySettings, discover

            data = self._training_data(own[:m], priors)
            assert data is not None
            rows, y, extra, _ = data
            result = discover(
                table,
                rows,
                y,
                extra_noise=extra,
                seeds=(base, default_kernel(space)),
                settings=DiscoverySettings(
                    generations=s.discovery_generations,
                    population=s.discovery_population,
                    max_iter=s.max_iter,
                ),
                rng=np.random.default_rng([seed & 0xFFFFFFFF, m, 0xD15C]),
            )
            found = result.best.kernel
            self._memo[key] = found
        assert isinstance(found, Base | Sum | Product)
        return found

    def kernel_choice(self, space: Space, history: Sequence[Observation]) -> KernelChoice | None:
        """The kernel ``"select"`` uses for the next ask after ``history`` (None: too few
        successful timings yet, so the GPU-aware kernel, or a strategy that does not select)."""
        if self.settings.kernel != "select":
            return None
        own = [o for o in history if not o.source]
        priors = [o for o in history if o.source]
        return self._choice(space, self._table(space), own, priors)

    def _choice(
        self,
        space: Space,
        table: FeatureTable,
        own: list[Observation],
        priors: list[Observation],
    ) -> KernelChoice | None:
        """The selection made at the latest checkpoint: the prefix of ``own`` ending at its
        ``select_from + j * reselect_every``-th success (memoised on that prefix)."""
        s = self.settings
        successes = [i for i, o in enumerate(own) if not o.failed]
        first = max(s.select_from, 2)
        if len(successes) < first:
            return None
        every = max(1, s.reselect_every)
        at = first + (len(successes) - first) // every * every
        prefix = own[: successes[at - 1] + 1]
        key = ("select", space.fingerprint, tuple(prefix), tuple(priors), self.discovered)
        found = self._memo.get(key)
        if found is None:
            data = self._training_data(prefix, priors)
            assert data is not None, "the prefix holds >= 2 successes"
            rows, y, extra, _ = data
            candidates = library_candidates(space, self.discovered)
            found = choose_kernel(candidates, table, rows, y, extra, max_iter=s.max_iter)
            self._memo[key] = found
        assert isinstance(found, KernelChoice)
        return found


def _standardise_by_source(obs: Sequence[Observation], target: str) -> FloatArray:
    """Targets transformed and z-scored within each source (a shape changes the scale only)."""
    t = np.array([o.time_ms for o in obs], dtype=float)
    out = np.empty_like(t)
    sources = [o.source for o in obs]
    for src in set(sources):
        idx = np.array([s == src for s in sources])
        y = _transform(t[idx], target)
        sd = float(y.std())
        out[idx] = (y - float(y.mean())) / (sd if sd > 1e-12 else 1.0)
    return out


def _transform(t: FloatArray, target: str) -> FloatArray:
    if target == "raw":
        return t
    y: FloatArray = np.log(t)
    if target == "log-winsor":
        return np.minimum(y, float(np.median(y)))
    if target == "rank":
        ranks = scipy.stats.rankdata(t) / (len(t) + 1.0)
        return np.asarray(scipy.stats.norm.ppf(ranks), dtype=float)
    return y


@contextlib.contextmanager
def _single_threaded_blas() -> Iterator[None]:
    """BLAS threads cost more than they give at n < 200 (4x slower on 2 cores): use one."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: only speed depends on it
        yield
        return
    with threadpool_limits(1, user_api="blas"):
        yield


def make(variant: str = "bo", **options: object) -> BayesOpt:
    """Registry factory for ``bo``, ``bo-local``, ``bo-select``, ``bo-discovered``, ``gp-default``.

    ``discovered`` (a sequence of kernel expressions) is handed to ``bo-select``'s candidates.
    """
    handed = options.pop("discovered", ())
    if not isinstance(handed, Sequence) or not all(
        isinstance(k, Base | Sum | Product) for k in handed
    ):
        raise TypeError(f"discovered: a sequence of kernel expressions, not {handed!r}")
    discovered: tuple[Kernel, ...] = tuple(handed)
    presets: dict[str, dict[str, object]] = {
        "bo": {},
        "bo-select": {"kernel": "select"},
        "bo-local": {"local_radius": 2, "acquisition": "lcb:1"},
        "bo-discovered": {"kernel": "discovered"},
        "gp-default": {
            "kernel": "default",
            "target": "raw",
            "feasibility": False,
            "initial": "random",
        },
    }
    if variant not in presets:
        raise ValueError(f"unknown BO variant {variant!r}; known: {sorted(presets)}")
    settings = BOSettings(**{**presets[variant], **options})  # type: ignore[arg-type]
    return BayesOpt(name=variant, settings=settings, discovered=discovered)
