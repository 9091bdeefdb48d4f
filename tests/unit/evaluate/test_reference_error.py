"""The fp32 reference's own error against float64 widens atol, and only honest reorderings pass.

The reference here is a float32 running sum taken one step at a time, as a GPU's torch.cumsum
accumulates (the CPU's torch.cumsum accumulates in double, so it would have no error to show).
"""

from types import SimpleNamespace

import pytest
import torch
import torch.nn as nn

from kernelwright.evaluate.correctness import (
    REF_ERROR_FACTOR,
    compare_outputs,
    effective_atol,
)
from kernelwright.evaluate.reference import Reference, RunSpec, unrun_copy
from kernelwright.evaluate.reference_error import (
    float64_outputs,
    measure_ref_errors,
    pooled_ref_errors,
)
from kernelwright.evaluate.request import JudgeRequest
from kernelwright.evaluate.runs import build_model
from kernelwright.records import Precision, Tolerance

TOL = Precision.FP32.default_tolerance
ROWS, COLS, BLOCK = 4, 20480, 64


def running_sum(x):
    """Inclusive scan along dim 1, one addition per step in x's own dtype."""
    acc = torch.zeros(x.shape[0], dtype=x.dtype)
    out = torch.empty_like(x)
    for i in range(x.shape[1]):
        acc = acc + x[:, i]
        out[:, i] = acc
    return out


def blocked_scan(x, block=BLOCK):
    """An honest reordering in float32: scan within blocks, then add the carried block sums."""
    r, n = x.shape
    within = x.view(r, n // block, block).cumsum(-1)
    out = torch.empty_like(within)
    carry = torch.zeros(r, 1, dtype=x.dtype)
    for b in range(n // block):
        out[:, b] = within[:, b] + carry
        carry = carry + within[:, b, -1:]
    return out.view(r, n)


class LongScan(nn.Module):
    def forward(self, x):
        return running_sum(x)


class ScanAndElementwise(nn.Module):
    def forward(self, x):
        return running_sum(x), x * torch.sigmoid(x)


class NoFloat64(nn.Module):
    def forward(self, x):
        if x.dtype == torch.float64:
            raise RuntimeError("\"cumsum_cpu\" not implemented for 'Double'")
        return running_sum(x)


@pytest.fixture(scope="module")
def scan():
    """Inputs, the fp32 reference, its measured errors and an honest candidate's output."""
    x = torch.randn(ROWS, COLS, generator=torch.Generator().manual_seed(0))
    expected = [running_sum(x)]
    errors, failure, _exact = measure_ref_errors(LongScan, [], 1, [x], expected, "cpu")
    assert failure == "" and errors is not None
    return SimpleNamespace(x=x, expected=expected, errors=errors, honest=blocked_scan(x))


def test_honest_reordered_scan_passes_only_through_the_widening(scan):
    strict = compare_outputs(scan.expected, [scan.honest], TOL)
    assert not strict["ok"] and "elements differ" in strict["message"]
    assert strict["widened"] == [] and strict["atol"] == [TOL.atol]

    widened = compare_outputs(scan.expected, [scan.honest], TOL, scan.errors)
    assert widened["ok"], widened["message"]
    (atol,) = widened["atol"]
    assert atol == pytest.approx(REF_ERROR_FACTOR * scan.errors[0]) and atol > TOL.atol
    assert "widened from 0.0001" in widened["widened"][0]


def test_the_reference_error_is_its_distance_from_float64(scan):
    exact = torch.cumsum(scan.x.double(), 1)
    assert scan.errors[0] == pytest.approx(float((scan.expected[0].double() - exact).abs().max()))
    assert 1e-4 < scan.errors[0] < 1e-2  # a long float32 sum: rounding, not a bug


@pytest.mark.parametrize(
    "wrong",
    [
        pytest.param(lambda x, ref: torch.nn.functional.pad(ref, (1, 0))[:, :-1], id="shifted"),
        pytest.param(
            lambda x, ref: blocked_scan(torch.cat([x[:, :1], x[:, 2:], x[:, -1:] * 0], 1)),
            id="one-term-dropped",
        ),
    ],
)
def test_a_wrong_scan_still_fails_with_the_widening(scan, wrong):
    r = compare_outputs(scan.expected, [wrong(scan.x, scan.expected[0])], TOL, scan.errors)
    assert not r["ok"] and "elements differ" in r["message"]
    assert "widened from 0.0001" in r["message"]  # the failure says which atol applied


def test_widening_is_per_output_so_a_bfloat16_result_still_fails(scan):
    exact_pair = [scan.expected[0], scan.x * torch.sigmoid(scan.x)]
    errors, _, _exact = measure_ref_errors(ScanAndElementwise, [], 1, [scan.x], exact_pair, "cpu")
    assert errors is not None and errors[0] is not None and errors[1] is not None
    assert effective_atol(TOL, errors[1]) == TOL.atol  # elementwise: nothing to widen
    xb = scan.x.bfloat16()
    in_bf16 = (xb * torch.sigmoid(xb)).float()
    r = compare_outputs(exact_pair, [scan.honest, in_bf16], TOL, errors)
    assert not r["ok"] and r["message"].startswith("output 1:")
    assert "(atol=0.0001, rtol=0.0001)" in r["message"]


def test_noise_ten_times_the_widened_atol_fails(scan):
    atol = effective_atol(TOL, scan.errors[0])
    noise = torch.rand(scan.honest.shape, generator=torch.Generator().manual_seed(1)) * 2 - 1
    r = compare_outputs(scan.expected, [scan.honest + 10 * atol * noise], TOL, scan.errors)
    assert not r["ok"] and "elements differ" in r["message"]


def test_a_failed_float64_run_measures_nothing_and_the_strict_tolerance_applies(scan):
    errors, failure, _exact = measure_ref_errors(NoFloat64, [], 1, [scan.x], scan.expected, "cpu")
    assert errors is None and "not implemented for 'Double'" in failure
    r = compare_outputs(scan.expected, [scan.honest], TOL, errors)
    assert not r["ok"] and r["atol"] == [TOL.atol] and r["widened"] == []


class Attention(nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


def test_an_ill_conditioned_reference_still_widens() -> None:
    """Scores in the thousands (inputs scaled by 64): the softmax magnifies the fp32 scores'
    rounding until the reference misses float64 by about 0.1% of its largest output."""
    torch.manual_seed(2)
    q, k, v = (torch.randn(1, 2, 256, 256) * 64 for _ in range(3))
    out = Attention()(q, k, v)
    errors, failure, exact = measure_ref_errors(Attention, [], 1, [q, k, v], [out], "cpu")
    assert failure == "" and errors is not None and exact is not None
    scale = exact[0].abs().max().item()
    assert errors[0] is not None and errors[0] > 1e-4 * scale


class DtypeBranch(nn.Module):
    def forward(self, x):
        return x * (1.05 if x.dtype == torch.float64 else 1.0), x.argmax(-1)


def test_a_float64_run_that_computes_something_else_widens_nothing():
    x = torch.randn(8, 16)
    errors, failure, _exact = measure_ref_errors(DtypeBranch, [], 1, [x], [x, x.argmax(-1)], "cpu")
    assert failure == "" and errors == [None, None]  # 5% off: not rounding; integers: exact


def request(precision, widen_atol=True):
    return JudgeRequest(
        task_path="t.py",
        size="small",
        device="cpu",
        precision=precision,
        tolerance=precision.default_tolerance,
        seed=1,
        trials=1,
        distributions=False,
        cache_dir=None,
        widen_atol=widen_atol,
    )


def expected_of(model_cls, req, x):
    ref = Reference(req, model_cls, lambda: [x.clone()], [])
    ref.runs.append(RunSpec("trial", "trial 1 (task)", 1))
    return ref.expected(0)[1]


def test_the_judge_measures_only_under_the_fp32_policy_without_a_users_atol():
    x = torch.randn(2, 300)
    fp32 = expected_of(LongScan, request(Precision.FP32), x)
    assert fp32.ref_error is not None and fp32.ref_error[0] > 0
    assert fp32.exact is not None and fp32.exact[0].dtype == torch.float64
    tf32 = expected_of(LongScan, request(Precision.TF32), x)
    assert tf32.ref_error is None and tf32.ref_error_failure == "" and tf32.exact is None
    user_atol = expected_of(LongScan, request(Precision.FP32, widen_atol=False), x)
    assert user_atol.ref_error is None
    failed = expected_of(NoFloat64, request(Precision.FP32), x)
    assert failed.ref_error is None and "Double" in failed.ref_error_failure
    assert torch.equal(failed.outputs[0], fp32.outputs[0])


def test_timing_outputs_use_the_largest_error_of_the_task_distribution_trials():
    ref = Reference(request(Precision.FP32), LongScan, list, [])
    for k, dist in enumerate(("task", "task", "scaled")):
        ref.runs.append(RunSpec("trial", f"trial {k + 1} ({dist})", k, dist))
    ref.ref_errors = {0: [1e-3], 1: [2e-3], 2: [0.1]}
    assert ref.timing_ref_errors() == [pytest.approx(2e-3)]
    out = torch.zeros(3)
    report = compare_outputs([out], [out], TOL, ref.timing_ref_errors())
    assert report["atol"] == [pytest.approx(REF_ERROR_FACTOR * 2e-3)]


def test_pooling_needs_every_run_measured():
    assert pooled_ref_errors([[1e-3, None], [2e-3, 5e-4]]) == [2e-3, None]
    assert pooled_ref_errors([[1e-3], None]) is None
    assert pooled_ref_errors([]) is None


def test_a_wrong_length_of_errors_widens_nothing():
    x = torch.randn(4)
    r = compare_outputs([x], [x + 1e-3], Tolerance(1e-4, 1e-4), [1.0, 1.0])
    assert not r["ok"] and r["atol"] == [1e-4]


def test_float64_from_an_unrun_copy_matches_a_rebuilt_model():
    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.b(torch.relu(self.a(x)))

    x = torch.randn(3, 8)
    model = build_model(Mlp, [], 7, "cpu", Precision.FP32)
    spare = unrun_copy(model)
    model(x)  # the fp32 run happens before the float64 one
    rebuilt = float64_outputs(Mlp, [], 7, [x], "cpu")
    copied = float64_outputs(Mlp, [], 7, [x], "cpu", spare)
    assert copied[0].dtype is torch.float64 and torch.equal(copied[0], rebuilt[0])


def test_a_lazy_model_is_built_again_not_copied():
    assert unrun_copy(torch.nn.LazyLinear(4)) is None


class Linear(nn.Module):
    def __init__(self, n: int = 32):
        super().__init__()
        self.fc = nn.Linear(n, n)

    def forward(self, x):
        return torch.tanh(self.fc(x)).cumsum(-1)


def test_timed_calls_precision_checks_build_one_float64_model_a_session(monkeypatch):
    from kernelwright.evaluate import reference as reference_mod

    builds = []
    real = reference_mod.build_model
    monkeypatch.setattr(reference_mod, "build_model",
                        lambda *a, **k: builds.append(a[2]) or real(*a, **k))
    ref = Reference(request(Precision.FP32), Linear, list, [])
    xs = [[torch.randn(4, 32)] for _ in range(3)]
    kept = [ref.timing_expected(x, exact=True) for x in xs]
    assert len(builds) == 2  # the timed model, then its float64 copy: once for all checks
    for x, exp in zip(xs, kept, strict=True):  # what a model built for each check gives
        _errors, _failure, fresh = measure_ref_errors(Linear, [], ref.model_seed_timing, x,
                                                      exp.outputs, "cpu")
        assert fresh is not None and exp.exact is not None
        assert torch.equal(exp.exact[0], fresh[0])


def test_a_large_timed_model_is_not_kept_in_float64(monkeypatch):
    from kernelwright.evaluate import reference as reference_mod

    monkeypatch.setattr(reference_mod, "FLOAT64_KEPT_BYTES", 1024)  # less than Linear's weights
    ref = Reference(request(Precision.FP32), Linear, list, [])
    exp = ref.timing_expected([torch.randn(4, 32)], exact=True)
    assert exp.exact is not None and ref._timing_model64 is False


class NoDouble(Linear):
    def double(self):
        raise RuntimeError("this model has no float64 form")


def test_a_model_that_cannot_be_converted_fails_its_checks_as_before():
    ref = Reference(request(Precision.FP32), NoDouble, list, [])
    exp = ref.timing_expected([torch.randn(4, 32)], exact=True)
    assert exp.exact is None and "no float64 form" in exp.ref_error_failure
    assert ref._timing_model64 is False and exp.outputs[0].shape == (4, 32)
