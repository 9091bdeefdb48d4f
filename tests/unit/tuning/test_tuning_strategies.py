"""Strategies: determinism under a seed, failures, batches, resumption, the registry."""

import importlib
import math

import numpy as np
import pytest

from kernelwright.errors import ConfigError
from kernelwright.tuning.replay import replay, run_once
from kernelwright.tuning.strategies import get_strategy, register_strategy, strategy_names
from kernelwright.tuning.strategies.base import Observation

FAST_BO = {"max_iter": 5, "dense_until": 8, "refit_every": 4}
ASK_TELL = {
    "random": {},
    "bo": FAST_BO,
    "bo-local": FAST_BO,
    "gp-default": FAST_BO,
    "bo-discovered": {
        **FAST_BO,
        "discover_at": (12,),
        "discovery_generations": 1,
        "discovery_population": 3,
    },
    "tpe": {},
}


@pytest.mark.parametrize("name", sorted(ASK_TELL))
def test_same_seed_same_run_and_no_repeats(measured, name):
    a = run_once(measured, get_strategy(name, **ASK_TELL[name]), 16, seed=3)
    b = run_once(measured, get_strategy(name, **ASK_TELL[name]), 16, seed=3)
    assert a == b
    rows, _ = a
    assert len(rows) == len(set(rows)) == 16
    c = run_once(measured, get_strategy(name, **ASK_TELL[name]), 16, seed=4)
    assert c[0] != rows


@pytest.mark.parametrize("name", ["bo", "tpe"])
def test_a_resumed_run_asks_what_an_uninterrupted_one_would(measured, name):
    rows, times = run_once(measured, get_strategy(name, **ASK_TELL[name]), 14, seed=5)
    history = [Observation(r, t) for r, t in zip(rows[:13], times[:13], strict=True)]
    fresh = get_strategy(name, **ASK_TELL[name])  # no memo: everything rebuilt from the history
    assert fresh.ask(measured.space, history, 1, 5) == [rows[13]]


def test_batches_are_distinct_and_unevaluated(measured):
    bo = get_strategy("bo", **FAST_BO)
    rows, times = run_once(measured, bo, 12, seed=1)
    history = [Observation(r, t) for r, t in zip(rows, times, strict=True)]
    batch = bo.ask(measured.space, history, 5, 1)
    assert len(batch) == len(set(batch)) == 5
    assert not set(batch) & set(rows)


def test_failures_are_learned_not_crashed_on(measured):
    """Failing configs (the register cliff) are told as None and avoided once seen."""
    result = replay(measured, get_strategy("bo", **FAST_BO), budget=30, repeats=3, seed=0)
    fail_rate_space = 1.0 - measured.ok.mean()
    late = [t is None for run in result.runs for t in run.times_ms[15:]]
    assert np.mean(late) < fail_rate_space


def test_all_failures_so_far_is_not_an_error(measured):
    bo = get_strategy("bo", **FAST_BO)
    failing = [r for r in range(len(measured.space)) if not measured.ok[r]][:12]
    history = [Observation(r, None) for r in failing]
    asked = bo.ask(measured.space, history, 3, 0)
    assert len(asked) == 3 and not set(asked) & set(failing)


def test_unknown_strategy_lists_the_known_ones():
    with pytest.raises(ConfigError, match="known: .*bo-discovered"):
        get_strategy("bayes")


def test_registry_refuses_duplicates():
    with pytest.raises(ConfigError, match="already registered"):
        register_strategy("bo", "somewhere.else")
    assert {"random", "bo", "bo-discovered", "gp-default", "tpe"} <= set(strategy_names())


def test_missing_optional_dependency_names_the_install(monkeypatch):
    real = importlib.import_module

    def fake(name, *args, **kwargs):
        if name == "optuna":
            raise ImportError("No module named 'optuna'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", fake)
    with pytest.raises(ConfigError, match=r"pip install 'kernelwright\[bo\]'"):
        get_strategy("tpe")


def test_kernel_tuner_strategies_replay_through_simulation_mode(measured):
    pytest.importorskip("kernel_tuner")
    kt = get_strategy("kt-genetic_algorithm")
    rows, times = run_once(measured, kt, 15, seed=2)
    assert 0 < len(rows) <= 15 and len(set(rows)) == len(rows)
    assert run_once(measured, get_strategy("kt-genetic_algorithm"), 15, seed=2) == (rows, times)


def test_equal_spaces_rebuilt_every_ask_share_the_model_cache(space_csv):
    """The structure stage rebuilds its Space per ask; suggestions must not depend on that."""
    from kernelwright.tuning.measured import load_measured_csv

    a, b = load_measured_csv(space_csv), load_measured_csv(space_csv)
    assert a.space is not b.space and a.space.fingerprint == b.space.fingerprint
    bo = get_strategy("bo", **FAST_BO)
    rows, times = run_once(a, bo, 12, seed=9)
    history = [Observation(r, t) for r, t in zip(rows, times, strict=True)]
    cold = get_strategy("bo", **FAST_BO).ask(b.space, history, 2, 9)
    assert bo.ask(b.space, history, 2, 9) == cold


def test_neighbours_move_one_parameter_of_the_fastest_config_nearest_value_first(measured):
    space = measured.space
    neighbours = get_strategy("neighbours")
    start = neighbours.ask(space, [], 1, 0)  # nothing timed: the config nearest every middle
    (row,) = start
    fast = Observation(row, 1.0)
    slow = next(Observation(r, 5.0) for r in range(len(space)) if r != row)
    moves = neighbours.ask(space, [slow, fast], 10, 0)
    best = space.config(row)
    assert moves and len(moves) == len(set(moves)) <= len(space.params)
    for r in moves:
        changed = [k for k, v in space.config(r).items() if v != best[k]]
        assert len(changed) == 1  # one parameter of the fastest config
    first = space.params[0]
    values = sorted(
        first.values, key=lambda v: (abs(math.log2(v) - math.log2(best[first.name])), v)
    )
    moved = [
        space.config(r)[first.name]
        for r in moves
        if space.config(r)[first.name] != best[first.name]
    ]
    if moved:  # the nearest value that gives a valid config comes first
        valid = [
            v
            for v in values
            if v != best[first.name] and space.index({**best, first.name: v}) is not None
        ]
        assert moved[0] == valid[0]


def test_neighbours_stop_when_every_neighbour_was_tried(measured):
    space = measured.space
    neighbours = get_strategy("neighbours")
    history = [Observation(neighbours.ask(space, [], 1, 0)[0], 1.0)]
    for _ in range(200):
        asked = neighbours.ask(space, history, 4, 0)
        if not asked:
            break
        history += [Observation(r, 2.0) for r in asked]  # slower: the start stays the best
    assert neighbours.ask(space, history, 4, 0) == []
    assert len({o.row for o in history}) == len(history)


def test_neighbours_then_bo_asks_bo_once_three_configs_ran(measured):
    staged = get_strategy("neighbours-then-bo", **FAST_BO)
    bo = get_strategy("bo", **FAST_BO)
    neighbours = get_strategy("neighbours")
    rows, times = run_once(measured, staged, 6, seed=2)
    history = [Observation(r, t) for r, t in zip(rows, times, strict=True)]
    timed = [o for o in history if o.time_ms is not None]
    assert len(timed) >= 3
    assert staged.ask(measured.space, history, 2, 2) == bo.ask(measured.space, history, 2, 2)
    first = [Observation(rows[0], times[0] or 1.0)]
    assert staged.ask(measured.space, first, 1, 2) == neighbours.ask(measured.space, first, 1, 2)


def test_a_prior_contradicted_by_the_run_is_dropped():
    """A source whose configs, measured here, were all slower than the median of the run's
    other measurements (or failed) is dropped; one with a fast config here is kept; so is a
    source the run has not measured yet."""
    from kernelwright.tuning.strategies.bayesopt import agreeing_priors

    own = [Observation(0, 5.0), Observation(1, 1.0), Observation(2, 2.0), Observation(3, 3.0),
           Observation(4, None)]
    misleading = [Observation(0, 1.0, "gpu-a"), Observation(4, 1.1, "gpu-a")]  # 5.0 and failed
    helpful = [Observation(1, 1.0, "gpu-b"), Observation(0, 2.0, "gpu-b")]  # 1.0 is fastest
    unseen = [Observation(9, 1.0, "gpu-c")]
    kept = agreeing_priors(own, [*misleading, *helpful, *unseen])
    assert {o.source for o in kept} == {"gpu-b", "gpu-c"}
    assert agreeing_priors(own[:2], misleading) == misleading  # too few other measurements


def test_bo_checks_its_priors_once_the_initial_design_is_measured(measured, monkeypatch):
    """The check runs on every ask after the initial design (5 own measurements with a prior),
    never before it and never with ``prior_check=False``; what it drops is not trained on."""
    import kernelwright.tuning.strategies.bayesopt as bayesopt
    from kernelwright.tuning.replay import transferred

    seen: list[int] = []

    def drop_all(own, priors):  # type: ignore[no-untyped-def]
        seen.append(len(own))
        return []

    monkeypatch.setattr(bayesopt, "agreeing_priors", drop_all)
    prior = transferred(measured, measured, list(range(10)), "elsewhere")
    fast = {"max_iter": 8, "dense_until": 10, "refit_every": 3}
    run_once(measured, get_strategy("bo", **fast), 8, seed=0, prior=prior)
    assert seen and min(seen) == 5
    seen.clear()
    run_once(measured, get_strategy("bo", prior_check=False, **fast), 8, seed=0, prior=prior)
    assert not seen


def test_neighbours_put_a_move_that_lost_on_other_tasks_last():
    """Two timings of a source that differ in one parameter say what moving it did there: the
    halving of BLOCK_M that ran 4x slower elsewhere comes after the other parameters' moves,
    and BLOCK_M's first move is then upward; a move that won comes first."""
    from kernelwright.tuning.space import Kind, Param, Space
    from kernelwright.tuning.strategies.neighbours import move_verdicts

    space = Space((Param("BLOCK_M", (32, 64, 128, 256), Kind.POW2),
                   Param("BLOCK_N", (16, 32, 64), Kind.POW2),
                   Param("WARPS", (2, 4, 8), Kind.POW2)), ())

    def row(m: int, n: int, w: int) -> int:
        return space.require_index({"BLOCK_M": m, "BLOCK_N": n, "WARPS": w})

    neighbours = get_strategy("neighbours")
    own = [Observation(row(128, 32, 4), 1.0)]
    plain = neighbours.ask(space, own, 3, 0)
    assert plain == [row(64, 32, 4), row(128, 16, 4), row(128, 32, 2)]  # file order, smaller first
    elsewhere = [Observation(row(128, 16, 4), 2.0, "archive:a"),
                 Observation(row(64, 16, 4), 8.0, "archive:a"),
                 Observation(row(128, 16, 8), 1.5, "archive:b"),
                 Observation(row(128, 16, 2), 1.6, "archive:c")]  # another source: no pair
    # one pair (source a): halving lost 4x, so doubling counts as a win
    assert move_verdicts(space, elsewhere) == {("BLOCK_M", -1): 1, ("BLOCK_M", 1): -1}
    informed = neighbours.ask(space, elsewhere + own, 3, 0)
    assert informed == [row(256, 32, 4), row(128, 16, 4), row(128, 32, 2)]
    # a move that lost in this very run counts too
    lost_here = own + [Observation(row(64, 32, 4), 5.0)]
    assert neighbours.ask(space, lost_here, 3, 0) == informed
    # only a loss past CLEAR counts: two readings 5% apart change nothing
    close = [Observation(row(128, 16, 4), 2.0, "archive:a"),
             Observation(row(64, 16, 4), 2.1, "archive:a")]
    assert move_verdicts(space, close) == {}
    assert neighbours.ask(space, close + own, 3, 0) == plain
    # at the largest BLOCK_M only a halving is left: after the moves without evidence
    top = [Observation(row(256, 32, 4), 1.0)]
    halving_lost = [Observation(row(256, 16, 4), 1.0, "archive:d"),
                    Observation(row(128, 16, 4), 3.0, "archive:d")]
    assert neighbours.ask(space, top, 3, 0) == [row(128, 32, 4), row(256, 16, 4),
                                                row(256, 32, 2)]
    assert neighbours.ask(space, halving_lost + top, 3, 0) == [row(256, 16, 4), row(256, 32, 2),
                                                               row(128, 32, 4)]
