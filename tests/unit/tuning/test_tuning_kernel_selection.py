"""Kernel selection by LOO-CRPS: the argmin, its fallback, determinism and resumption."""

import csv
import math

import numpy as np

from kernelwright.tuning.gp.features import Feature, FeatureTable
from kernelwright.tuning.gp.kernels import Base
from kernelwright.tuning.gp.library import default_kernel, gpu_kernel
from kernelwright.tuning.gp.loo import loo_crps
from kernelwright.tuning.gp.model import fit
from kernelwright.tuning.gp.selection import choose_kernel, library_candidates
from kernelwright.tuning.measured import load_measured_csv
from kernelwright.tuning.replay import run_once
from kernelwright.tuning.strategies import get_strategy
from kernelwright.tuning.strategies.base import Observation

FAST = {"max_iter": 8, "dense_until": 8, "refit_every": 4, "n_init": 6}


def _power_of_two_space(tmp_path):
    """Sizes 1..1024 whose log time is a smooth bowl in log2(size): on a linear scale ten of
    the eleven values crowd into the bottom tenth, so only a log2 warp sees the bowl."""
    path = tmp_path / "pow2.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["block_x", "block_y", "time_ms", "time_std_ms", "n_rep", "compile_ms", "status"]
        )
        for i in range(11):
            for j in range(6):
                t = math.exp(0.3 * (i - 5) ** 2 + 0.4 * (j - 2) ** 2)
                w.writerow([2**i, 2**j, round(t, 6), 0.01, 32, 1.0, "ok"])
    return load_measured_csv(path)


def _log_targets(measured, n, seed):
    """Standardised log times of ``n`` random configs that ran."""
    ok = np.flatnonzero(measured.ok)
    rows = np.sort(np.random.default_rng(seed).choice(ok, size=n, replace=False))
    y = np.log(measured.times_ms[rows])
    return rows, (y - y.mean()) / y.std()


def test_power_of_two_landscape_picks_the_log2_kernel_and_it_is_the_crps_argmin(tmp_path):
    """The log2-warped (GPU-aware) kernel must win by a margin, and the winner is the candidate
    whose refitted LOO-CRPS is lowest."""
    measured = _power_of_two_space(tmp_path)
    table = FeatureTable(measured.space)
    rows, y = _log_targets(measured, 24, seed=0)
    extra = np.zeros(len(y))
    candidates = library_candidates(measured.space)
    choice = choose_kernel(candidates, table, rows, y, extra, max_iter=40)
    refitted = {
        c.label: loo_crps(fit(c.kernel, table, rows, y, extra_noise=extra, max_iter=40))
        for c in candidates
    }
    assert choice.label == min(refitted, key=refitted.__getitem__) == "gpu"
    assert refitted["default"] > refitted["gpu"] * 3  # clearly, not by a hair
    assert dict(choice.crps) == refitted


def test_a_discovered_kernel_competes_only_on_a_space_whose_parameters_it_reads(measured):
    space = measured.space
    own = Base("m52", (Feature(("block_x",), "log2"), Feature(("tile",), "log2")))
    foreign = Base("m52", (Feature(("MWG",), "log2"),))
    labels = [c.label for c in library_candidates(space, (own, foreign, gpu_kernel(space)))]
    assert labels == ["gpu", "default", "discovered-1"]


def test_before_enough_timings_select_is_exactly_bo(measured):
    select = get_strategy("bo-select", **FAST, select_from=12)
    bo = get_strategy("bo", **FAST)
    rows, times = run_once(measured, bo, 10, seed=7)
    history = [Observation(r, t) for r, t in zip(rows, times, strict=True)]
    assert sum(t is not None for t in times) < 12
    assert select.kernel_choice(measured.space, history) is None
    assert select.ask(measured.space, history, 2, 7) == bo.ask(measured.space, history, 2, 7)


def test_choice_is_a_function_of_the_history_and_resumes_identically(measured):
    kw = {**FAST, "select_from": 8, "reselect_every": 3}
    rows, times = run_once(measured, get_strategy("bo-select", **kw), 15, seed=5)
    history = [Observation(r, t) for r, t in zip(rows[:14], times[:14], strict=True)]
    first, second = get_strategy("bo-select", **kw), get_strategy("bo-select", **kw)
    choice = first.kernel_choice(measured.space, history)
    assert choice is not None and choice == second.kernel_choice(measured.space, history)
    assert str(choice.kernel) in {
        str(gpu_kernel(measured.space)),
        str(default_kernel(measured.space)),
    }
    # 14 evaluations hold >= 8 successes: the choice was made on the prefix ending at the
    # 8th, 11th or 14th success, never on more successes than exist
    successes = sum(t is not None for t in times[:14])
    assert 8 <= choice.observations <= successes
    staged = get_strategy("neighbours-then-bo-select", **kw)
    assert staged.kernel_choice(measured.space, history) == choice  # what the report names
    assert get_strategy("bo", **FAST).kernel_choice(measured.space, history) is None
    # a fresh strategy (no memo) resumes the stopped run with the suggestion it would have made
    assert second.ask(measured.space, history, 1, 5) == [rows[14]]
