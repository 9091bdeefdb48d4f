"""Kernel discovery: ranked by LOO-CRPS, seeds always scored, proposers pluggable."""

import numpy as np

from kernelwright.tuning.discovery import DiscoverySettings, GrammarMutations, Scored, discover
from kernelwright.tuning.gp.features import FeatureTable
from kernelwright.tuning.gp.kernels import Base, Kernel, Product, Sum, features_of
from kernelwright.tuning.gp.library import default_kernel, gpu_kernel

SMALL = DiscoverySettings(generations=2, population=4, max_iter=10)


def _data(measured, rng, n=24):
    rows = np.sort(rng.choice(np.flatnonzero(measured.ok), size=n, replace=False))
    y = np.log(measured.times_ms[rows])
    return rows, (y - y.mean()) / y.std()


def test_discovery_never_ranks_below_its_seeds(measured, rng):
    table = FeatureTable(measured.space)
    rows, y = _data(measured, rng)
    seeds = (gpu_kernel(measured.space), default_kernel(measured.space))
    result = discover(table, rows, y, seeds=seeds, rng=rng, settings=SMALL)
    fitness = [s.fitness for s in result.scored]
    assert fitness == sorted(fitness)
    for seed in seeds:
        entry = result.score_of(seed)
        assert entry is not None and result.best.fitness <= entry.fitness
    assert len(result.scored) > len(seeds)


def test_grammar_mutations_build_valid_expressions(measured, rng):
    proposer = GrammarMutations.for_space(measured.space)
    vocab = set(proposer.numeric) | set(proposer.categorical)
    parents = [
        Scored(gpu_kernel(measured.space), 0.3, 0.3, None),
        Scored(default_kernel(measured.space), 0.4, 0.4, None),
    ]
    children = proposer.propose(parents, 40, rng)
    assert len(children) == 40
    for k in children:
        assert isinstance(k, Base | Sum | Product)
        assert str(k)  # prints as math
        assert set(features_of(k)) <= vocab | set(features_of(parents[1].kernel))


def test_a_custom_proposer_plugs_in(measured, rng):
    calls = []

    class Fixed:
        def propose(self, parents, n, rng) -> list[Kernel]:
            calls.append(len(parents))
            return [Base("se", features_of(default_kernel(measured.space)))]

    table = FeatureTable(measured.space)
    rows, y = _data(measured, rng)
    result = discover(
        table,
        rows,
        y,
        seeds=(default_kernel(measured.space),),
        rng=rng,
        settings=SMALL,
        proposer=Fixed(),
    )
    assert calls and any(str(s.kernel).startswith("SE(") for s in result.scored)
