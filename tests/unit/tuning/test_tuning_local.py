"""Local exploitation: Hamming neighbourhoods of incumbents, and ``bo-local``'s trust region."""

import numpy as np

from kernelwright.tuning.neighbourhood import evaluations_since_improvement, value_codes, within
from kernelwright.tuning.replay import run_once
from kernelwright.tuning.strategies import get_strategy
from kernelwright.tuning.strategies.base import Observation

FAST_BO = {"max_iter": 5, "dense_until": 8, "refit_every": 4}
LCB = {**FAST_BO, "acquisition": "lcb:1"}  # bo-local's acquisition, without its trust region


def _changed(space, a, b):
    ca, cb = space.config(a), space.config(b)
    return sum(ca[k] != cb[k] for k in ca)


def test_a_neighbourhood_holds_exactly_the_valid_rows_within_the_radius(measured):
    space = measured.space
    codes = value_codes(space)
    everything = np.arange(len(space))
    centre = len(space) // 2
    for radius in (0, 1, 2):
        near = everything[within(codes, everything, [centre], radius)]
        expected = [r for r in everything if _changed(space, r, centre) <= radius]
        assert near.tolist() == expected
        for r in near:  # rows of the valid table: every restriction holds
            assert space.index(space.config(int(r))) == r
    one_move = everything[within(codes, everything, [centre], 1)]
    assert centre in one_move and len(one_move) > 1


def test_a_neighbourhood_of_several_centres_is_their_union(measured):
    space = measured.space
    codes = value_codes(space)
    everything = np.arange(len(space))
    a, b = 0, len(space) - 1
    both = within(codes, everything, [a, b], 1)
    assert (both == (within(codes, everything, [a], 1) | within(codes, everything, [b], 1))).all()


def test_evaluations_since_improvement_counts_failures_and_ties_keep_the_first():
    assert evaluations_since_improvement([]) == 0
    assert evaluations_since_improvement([None, None]) == 2
    assert evaluations_since_improvement([3.0, 1.0, 2.0, None]) == 2
    assert evaluations_since_improvement([3.0, 1.0, 1.0]) == 1
    assert evaluations_since_improvement([3.0, 2.0, 1.0]) == 0


def _stalled_history(measured, n, patience):
    """A run of ``n`` evaluations whose fastest config came ``patience`` or more steps ago."""
    rows, times = run_once(measured, get_strategy("bo", **FAST_BO), n, seed=7)
    first_ok = next(i for i, t in enumerate(times) if t is not None)
    assert n - 1 - first_ok >= patience
    fastest = 0.999 * min(t for t in times if t is not None)  # just ahead: BO still roams
    times = [fastest if i == first_ok else t for i, t in enumerate(times)]
    return [Observation(r, t) for r, t in zip(rows, times, strict=True)], rows[first_ok]


def test_once_stalled_bo_local_asks_only_near_the_incumbent_and_never_repeats(measured):
    space = measured.space
    history, incumbent = _stalled_history(measured, 16, patience=5)
    roaming = get_strategy("bo", **LCB).ask(space, history, 4, 7)
    assert max(_changed(space, r, incumbent) for r in roaming) > 2  # unrestricted BO goes far
    asked = get_strategy("bo-local", **FAST_BO).ask(space, history, 4, 7)
    assert len(asked) == len(set(asked)) == 4
    assert not set(asked) & {o.row for o in history}
    assert all(_changed(space, r, incumbent) <= 2 for r in asked)
    narrow = get_strategy("bo-local", local_radius=1, **FAST_BO).ask(space, history, 2, 7)
    assert all(_changed(space, r, incumbent) <= 1 for r in narrow)


def test_while_improving_bo_local_asks_what_its_unrestricted_model_asks(measured):
    rows, times = run_once(measured, get_strategy("bo", **FAST_BO), 14, seed=3)
    times = [*times[:-1], 0.01]  # the last evaluation is the fastest: not stalled
    history = [Observation(r, t) for r, t in zip(rows, times, strict=True)]
    bo = get_strategy("bo", **LCB).ask(measured.space, history, 3, 3)
    assert get_strategy("bo-local", **FAST_BO).ask(measured.space, history, 3, 3) == bo


def test_an_exhausted_neighbourhood_falls_back_to_the_whole_space(measured):
    space = measured.space
    history, incumbent = _stalled_history(measured, 16, patience=5)
    codes = value_codes(space)
    everything = np.arange(len(space))
    ball = everything[within(codes, everything, [incumbent], 1)]
    done = {o.row for o in history}
    history += [Observation(int(r), 50.0) for r in ball if int(r) not in done]
    asked = get_strategy("bo-local", local_radius=1, **FAST_BO).ask(space, history, 2, 7)
    assert len(asked) == 2 and not set(asked) & {o.row for o in history}
