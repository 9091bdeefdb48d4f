import math

import torch

from kernelwright.evaluate import correctness
from kernelwright.evaluate.correctness import (
    compare_outputs,
    inputs_unchanged,
    norm_tolerance,
    precision_shortfall,
)
from kernelwright.records import Tolerance

TOL = Tolerance(1e-4, 1e-4)


def test_identical_outputs_pass_with_zero_error():
    x = torch.randn(5, 7)
    r = compare_outputs([x], [x.clone()], TOL)
    assert r["ok"] and r["max_abs_err"] == 0 and r["norm_err"] == 0


def test_every_element_is_checked():
    x = torch.randn(100, 100)
    y = x.clone()
    y[99, 99] += 1.0
    r = compare_outputs([x], [y], TOL)
    assert not r["ok"]
    assert "1 of 10000 elements differ" in r["message"] and "(99, 99)" in r["message"]


def test_outputs_in_many_chunks_give_the_statistics_of_one(monkeypatch):
    # Chunks keep their statistics on the device until one read-back: the counts, the first
    # failing index, the largest errors and the norms must be those of a single pass.
    x = torch.randn(40, 25)
    y = x + 1e-6 * torch.randn(40, 25)
    y[17, 3] += 1.0
    y[30, 0] += 2.0
    y[33, 9] = float("nan")
    whole = compare_outputs([x], [y], TOL)
    monkeypatch.setattr(correctness, "CHUNK", 64)
    chunked = compare_outputs([x], [y], TOL)
    assert "3 of 1000 elements differ" in chunked["message"]
    assert "first at index (17, 3)" in chunked["message"]
    assert chunked["unwritten"] == whole["unwritten"] == 1
    for key in ("max_abs_err", "max_rel_err", "norm_err"):
        assert math.isclose(chunked[key], whole[key], rel_tol=1e-9), key


def test_precision_check_in_many_chunks(monkeypatch):
    exact = torch.randn(300, dtype=torch.float64)
    reference = exact.float()
    lowered = exact.to(torch.bfloat16).float()
    monkeypatch.setattr(correctness, "CHUNK", 7)
    assert precision_shortfall([reference], [exact], [reference]) == ""
    assert "below the fp32 policy" in precision_shortfall([lowered], [exact], [reference])


def test_shape_dtype_and_count_mismatches():
    x = torch.randn(4, 4)
    assert "shape (4, 3)" in compare_outputs([x], [x[:, :3]], TOL)["message"]
    assert "dtype float16" in compare_outputs([x], [x.half()], TOL)["message"]
    assert "returned 2 output(s), expected 1" in compare_outputs([x], [x, x], TOL)["message"]
    assert "no tensor outputs" in compare_outputs([x], None, TOL)["message"]


def test_nan_where_reference_is_finite_counts_as_unwritten():
    x = torch.randn(3, 8)
    y = x.clone()
    y[1] = float("nan")
    r = compare_outputs([x], [y], TOL)
    assert not r["ok"] and r["unwritten"] == 8 and "never written" in r["message"]


def test_matching_nan_and_inf_are_accepted():
    x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert compare_outputs([x], [x.clone()], TOL)["ok"]
    y = x.clone()
    y[2] = -float("inf")
    assert not compare_outputs([x], [y], TOL)["ok"]


def test_integers_need_exact_equality():
    a = torch.tensor([1000000, 5])
    b = torch.tensor([1000001, 5])  # within rtol * |a| but an index off by one is wrong
    r = compare_outputs([a], [b], TOL)
    assert not r["ok"] and "exact match required for int64" in r["message"]


def test_normalised_error_catches_zeros_for_tiny_outputs():
    ref = torch.randn(1000) * 1e-6  # every element is within atol of zero
    r = compare_outputs([ref], [torch.zeros(1000)], TOL)
    assert not r["ok"] and "normalised error" in r["message"]
    assert math.isclose(r["norm_err"], 1.0)
    assert norm_tolerance(TOL) < 1.0


def test_scalar_outputs_are_compared_with_the_tolerance():
    assert not compare_outputs([torch.tensor(2.0)], [torch.tensor(2.01)], TOL)["ok"]
    assert compare_outputs([torch.tensor(2.0)], [torch.tensor(2.0001)], TOL)["ok"]


def test_input_mutation_detection_is_bitwise_and_nan_aware():
    x = torch.tensor([1.0, float("nan")])
    assert inputs_unchanged([x], [x.clone()]) == ""
    y = x.clone()
    y[0] = 1.0000001
    assert "input 0 was modified" in inputs_unchanged([x], [y])
    assert "replaced or reshaped" in inputs_unchanged([x], [x[:1]])


def test_input_mutation_detection_sees_zero_signs_and_nan_payloads():
    x = torch.tensor([0.0, float("nan"), 2.0])
    signed = x.clone()
    signed[0] = -0.0  # equal as a value, another bit pattern
    assert "input 0 was modified" in inputs_unchanged([x], [signed])
    payload = x.clone()
    payload.view(torch.int32)[1] += 1  # still a NaN, another payload
    assert torch.isnan(payload[1])
    assert "input 0 was modified" in inputs_unchanged([x], [payload])
    assert inputs_unchanged([x[::2]], [x[::2].clone()]) == ""  # strided inputs compare too


def _both_paths(monkeypatch, expected, actual, tol=TOL, ref_errors=None, exact=None):
    """compare_outputs as it runs, and with both shortcuts (identical outputs; every element
    finite and within the tolerance) switched off."""
    fast = compare_outputs(expected, actual, tol, ref_errors, exact)
    with monkeypatch.context() as m:
        m.setattr(correctness, "_identical", lambda rf, af: False)
        m.setattr(correctness, "_finite_and_within", lambda *args: None)
        full = compare_outputs(expected, actual, tol, ref_errors, exact)
    return fast, full


def test_identical_outputs_get_the_full_comparisons_verdict(monkeypatch):
    # An output equal to the reference element for element (infinities, -0.0 against 0.0, half
    # precision, several chunks, a float64 answer given) skips the comparison's passes: its
    # result must be the one the whole comparison returns.
    monkeypatch.setattr(correctness, "CHUNK", 64)
    x = torch.randn(33, 17)
    x[0, 0], x[1, 1], x[2, 2] = float("inf"), float("-inf"), 0.0
    y = x.clone()
    y[2, 2] = -0.0
    cases = [
        ([x], [y], {}),
        ([x.half()], [y.half()], {}),
        ([x.bfloat16(), x], [y.bfloat16(), y], {"ref_errors": [1e-3, None]}),
        ([x], [y], {"exact": [x.double()]}),
        ([torch.zeros(9)], [torch.zeros(9)], {}),
        ([torch.empty(0, 3)], [torch.empty(0, 3)], {}),
    ]
    for expected, actual, extra in cases:
        fast, full = _both_paths(monkeypatch, expected, actual, **extra)
        assert fast == full and fast["ok"], (fast, full)


def test_outputs_that_differ_anywhere_take_the_whole_comparison(monkeypatch):
    # One element off by a rounding, or NaN where the reference has NaN (NaN equals nothing),
    # is not identical: the comparison runs in full and decides as before.
    monkeypatch.setattr(correctness, "CHUNK", 64)
    x = torch.randn(20, 20)
    near = x.clone()
    near[19, 19] = torch.nextafter(near[19, 19], torch.tensor(math.inf))
    both_nan = x.clone()
    x_nan = x.clone()
    x_nan[5, 5] = both_nan[5, 5] = float("nan")
    far = x.clone()
    far[7, 3] += 1.0
    assert not correctness._identical(x.reshape(-1), near.reshape(-1))
    assert not correctness._identical(x_nan.reshape(-1), both_nan.reshape(-1))
    for expected, actual, ok in (([x], [near], True), ([x_nan], [both_nan], True),
                                 ([x], [far], False)):
        fast, full = _both_paths(monkeypatch, expected, actual)
        assert fast == full and fast["ok"] is ok, (fast, full)
    assert _both_paths(monkeypatch, [x], [near])[0]["max_abs_err"] > 0


def _screened(expected, actual, tol=TOL):
    """What the within-tolerance shortcut makes of one output (None: the whole comparison)."""
    exp, out = expected.reshape(-1), actual.reshape(-1)
    work = torch.float64 if exp.dtype == torch.float64 else torch.float32
    return correctness._finite_and_within(exp, out, tol.atol, tol.rtol, work,
                                          max(tol.atol, 1e-30))


def test_outputs_within_the_tolerance_get_the_full_comparisons_verdict(monkeypatch):
    # Every element finite and within the tolerance, none identical everywhere (rounding-level
    # noise, half precision, several chunks, a float64 answer, a widened atol, an element right
    # at the bound, a reference of zeros): the shortcut's statistics are the whole
    # comparison's, to the last bit.
    monkeypatch.setattr(correctness, "CHUNK", 64)
    torch.manual_seed(0)
    x = torch.randn(33, 17)
    noisy = x + 1e-5 * torch.randn(33, 17)
    at_bound = x.clone()
    at_bound[3, 4] = x[3, 4] + (TOL.atol + TOL.rtol * abs(float(x[3, 4]))) * 0.999
    wide = x + 5e-4 * torch.randn(33, 17)
    cases = [
        ([x], [noisy], {}),
        ([x], [at_bound], {}),
        ([x.half()], [(x + 1e-3 * torch.randn(33, 17)).half()], {"tol": Tolerance(1e-2, 1e-2)}),
        ([x.bfloat16(), x], [(x + 1e-2 * torch.randn(33, 17)).bfloat16(), noisy],
         {"ref_errors": [3e-2, None]}),
        ([x], [noisy], {"exact": [x.double()]}),
        ([x], [wide], {"ref_errors": [1e-3]}),
        ([torch.zeros(9)], [torch.full((9,), 1e-6)], {}),
        ([x.double()], [noisy.double()], {}),
    ]
    screen = correctness._finite_and_within
    taken = []

    def spy(*args):
        found = screen(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(correctness, "_finite_and_within", spy)
    for expected, actual, extra in cases:
        taken.clear()
        fast, full = _both_paths(monkeypatch, expected, actual, **extra)
        assert fast == full and fast["ok"], (fast, full)
        assert fast["max_abs_err"] > 0
        assert taken and all(taken), "the shortcut answered every output"


def test_outputs_not_finite_or_outside_take_the_whole_comparison(monkeypatch):
    # NaN or an infinity anywhere (matched or not), an element outside the tolerance, an
    # overflowing difference, or a normalised error past its bound: the shortcut declines and
    # the whole comparison decides, as before.
    monkeypatch.setattr(correctness, "CHUNK", 64)
    torch.manual_seed(1)
    x = torch.randn(20, 20)
    near = x + 1e-6 * torch.randn(20, 20)
    cases = []
    for where, ref_value, out_value, ok in (
        ((5, 5), float("nan"), float("nan"), True),
        ((6, 6), float("inf"), float("inf"), True),
        ((7, 7), float("-inf"), float("-inf"), True),
        ((8, 8), float("inf"), 1.0, False),
        ((9, 9), 1.0, float("nan"), False),
        ((10, 10), 1.0, float("inf"), False),
        ((11, 11), 3e38, -3e38, False),
        ((12, 12), 1.0, 1.1, False),
    ):
        r, a = x.clone(), near.clone()
        r[where], a[where] = ref_value, out_value
        cases.append((r, a, ok))
    for r, a, ok in cases:
        assert _screened(r, a) is None
        fast, full = _both_paths(monkeypatch, [r], [a])
        assert fast == full and fast["ok"] is ok, (fast, full)
    # within atol everywhere, yet a thousandth of the answer's size: the normalised error
    tiny = torch.full((50,), 1e-3)
    fast, full = _both_paths(monkeypatch, [tiny], [torch.zeros(50)], Tolerance(1e-2, 0.0))
    assert _screened(tiny, torch.zeros(50), Tolerance(1e-2, 0.0)) is not None
    assert fast == full and not fast["ok"] and "normalised error" in fast["message"]
