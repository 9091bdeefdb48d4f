"""Replay and scores: the exact random baseline; BO ahead of random on a synthetic space."""

import itertools
import math

import numpy as np
import pytest

from kernelwright.tuning.replay import checkpoints, replay
from kernelwright.tuning.scoring import best_so_far, expected_random_best, score
from kernelwright.tuning.strategies import get_strategy


def test_expected_random_best_matches_enumeration():
    times = np.array([5.0, 3.0, np.nan, 4.0, 9.0, 1.5, 7.0])
    worst = np.nanmax(times)
    filled = np.where(np.isnan(times), worst, times)
    for n in range(1, len(times) + 1):
        subsets = list(itertools.combinations(filled, n))
        exact = np.mean([min(s) for s in subsets])
        assert expected_random_best(times, n) == pytest.approx(exact, rel=1e-12)


def test_expected_random_best_is_stable_for_large_spaces():
    times = np.random.default_rng(0).lognormal(size=20000)
    r = [expected_random_best(times, n) for n in (1, 20, 80, 20000)]
    assert r[0] == pytest.approx(times.mean())
    assert r[0] > r[1] > r[2] > r[3] == pytest.approx(times.min())


def test_score_and_running_best():
    assert score(1.0, random_ms=2.0, optimum_ms=1.0) == 1.0
    assert score(2.0, random_ms=2.0, optimum_ms=1.0) == 0.0
    assert score(3.0, random_ms=2.0, optimum_ms=1.0) == -1.0
    assert best_so_far([None, 3.0, None, 2.0, 4.0]) == [math.inf, 3.0, 3.0, 2.0, 2.0]
    assert checkpoints(40) == [10, 20, 40] and checkpoints(25) == [10, 20, 25]


def test_bo_beats_random_on_a_synthetic_space(measured):
    fast = {"max_iter": 8, "dense_until": 10, "refit_every": 3}
    bo = replay(measured, get_strategy("bo", **fast), budget=20, repeats=4, seed=0).at(20, measured)
    rnd = replay(measured, get_strategy("random"), budget=20, repeats=4, seed=0).at(20, measured)
    assert bo.score_mean > rnd.score_mean
    assert bo.score_mean > 0.5
    assert bo.fraction_mean > 0.9


def test_replay_counts_each_config_once(measured):
    class Stubborn:
        name = "stubborn"

        def ask(self, space, history, n, seed):
            return list(range(len(history) + 1))  # re-proposes everything seen, plus one new

    result = replay(measured, Stubborn(), budget=5, repeats=1, seed=0)
    assert list(result.runs[0].rows) == [0, 1, 2, 3, 4]


def test_prior_measurements_warm_start_a_run_without_costing_its_budget(measured):
    """A sibling's measurements (here the same space, as if measured before) go to the strategy
    as labelled prior observations: the run still makes ``budget`` evaluations of its own, and
    the warm-started run reaches the optimum no later than the cold one."""
    from kernelwright.errors import ConfigError
    from kernelwright.tuning.replay import run_once, transferred
    from kernelwright.tuning.strategies.base import Observation

    best_row = int(np.nanargmin(measured.times_ms))
    prior = transferred(measured, measured, [best_row, 0, 1], "earlier")
    assert [o.source for o in prior] == ["earlier"] * 3 and prior[0].row == best_row
    bo = get_strategy("bo", max_iter=8, dense_until=10, refit_every=3)
    warm_rows, warm_times = run_once(measured, bo, 6, seed=3, prior=prior)
    cold_rows, cold_times = run_once(measured, bo, 6, seed=3)
    assert len(warm_rows) == 6 == len(set(warm_rows))
    assert best_row in warm_rows  # the prior's best is tried first-hand
    found = lambda ts: min((t for t in ts if t is not None), default=math.inf)  # noqa: E731
    assert found(warm_times) <= found(cold_times)
    with pytest.raises(ConfigError, match="source"):
        run_once(measured, bo, 3, seed=0, prior=[Observation(0, 1.0)])
