"""The metrics on synthetic verdicts: exact numbers, KernelBench's definitions."""

import math

import pytest

from kernelwright.bench import SUMMARY_KEYS, by_family, fast_p, geomean_speedup, summarise
from kernelwright.bench.metrics import geomean, median_sol_fraction, status_counts


@pytest.fixture
def suite(make_result):
    return [
        make_result("a", eager=2.0, compile=1.0, sol=0.5, family="x"),
        make_result("b", eager=4.0, compile=0.5, sol=0.25, family="x"),
        make_result("c", eager=0.5, compile=0.25, sol=0.1, family="y"),
        make_result("d", "incorrect", family="y"),
        make_result("e", "missing", family="y"),
        make_result("f", "error", family="z"),
    ]


def test_summary_has_exactly_the_issue_keys(suite):
    assert tuple(summarise(suite)) == SUMMARY_KEYS
    assert SUMMARY_KEYS == (
        "n_tasks",
        "fast_0",
        "fast_1",
        "fast_2",
        "fast_0_vs_compile",
        "fast_1_vs_compile",
        "fast_2_vs_compile",
        "geomean_speedup",
        "geomean_speedup_correct_only",
        "geomean_speedup_vs_compile",
        "geomean_speedup_correct_only_vs_compile",
        "median_sol_fraction",
    )


def test_fast_p_keeps_failures_in_the_denominator(suite):
    s = summarise(suite)
    assert s["n_tasks"] == 6
    assert s["fast_0"] == 3 / 6
    assert s["fast_1"] == 2 / 6
    assert s["fast_2"] == 1 / 6  # 2.0 is not > 2
    assert s["fast_0_vs_compile"] == 3 / 6
    assert s["fast_1_vs_compile"] == 0.0  # 1.0 is not > 1
    assert s["fast_2_vs_compile"] == 0.0


def test_geomeans_count_failures_as_one_or_leave_them_out(suite):
    s = summarise(suite)
    assert s["geomean_speedup"] == pytest.approx(2 ** (1 / 3), rel=1e-12)  # (2*4*0.5*1*1*1)^(1/6)
    assert s["geomean_speedup_correct_only"] == pytest.approx(4 ** (1 / 3), rel=1e-12)
    assert s["geomean_speedup_vs_compile"] == pytest.approx(2**-0.5, rel=1e-12)
    assert s["geomean_speedup_correct_only_vs_compile"] == pytest.approx(0.5, rel=1e-12)


def test_median_sol_fraction_is_over_correct_tasks(suite):
    assert summarise(suite)["median_sol_fraction"] == 0.25
    assert median_sol_fraction(suite[:2]) == pytest.approx(0.375)


def test_unmeasured_baseline_gives_none_not_zero(suite):
    s = summarise(suite, baselines=("eager",))
    for key in SUMMARY_KEYS:
        if key.endswith("_vs_compile"):
            assert s[key] is None, key
    assert s["fast_0"] == 0.5


def test_correct_task_without_a_compile_time(make_result):
    # torch.compile failed on this model: no speedup to count; 1.0 in the all-tasks geomean.
    results = [make_result("a", eager=3.0, compile=None), make_result("b", eager=1.0, compile=4.0)]
    assert fast_p(results, 0, "compile") == 0.5
    assert geomean_speedup(results, "compile") == pytest.approx(2.0)
    assert geomean_speedup(results, "compile", correct_only=True) == pytest.approx(4.0)


def test_no_tasks_and_no_correct_tasks(make_result):
    empty = summarise([])
    assert empty["n_tasks"] == 0
    assert all(empty[k] is None for k in SUMMARY_KEYS if k != "n_tasks")
    failed = summarise([make_result("a", "incorrect"), make_result("b", "timeout")])
    assert failed["fast_0"] == 0.0
    assert failed["geomean_speedup"] == 1.0
    assert failed["geomean_speedup_correct_only"] is None
    assert failed["median_sol_fraction"] is None


def test_by_family_and_counts(suite):
    families = by_family(suite)
    assert list(families) == ["x", "y", "z"]
    assert families["x"]["fast_1"] == 1.0
    assert families["y"]["n_tasks"] == 3 and families["y"]["fast_0"] == pytest.approx(1 / 3)
    assert families["z"]["geomean_speedup"] == 1.0
    assert status_counts(suite) == {"correct": 3, "incorrect": 1, "missing": 1, "error": 1}


def test_geomean_rejects_non_positive_values():
    assert geomean([]) is None
    assert geomean([8.0, 2.0]) == pytest.approx(4.0)
    with pytest.raises(ValueError):
        geomean([1.0, 0.0])
    assert math.isclose(geomean([1e-3] * 100), 1e-3)
