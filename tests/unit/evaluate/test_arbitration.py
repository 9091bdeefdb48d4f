"""Elements outside the reference's tolerance are arbitrated by the float64 answer: a candidate
passes where it is no farther from it than the reference, or where its misses of it are no more
numerous and no larger than the reference's own; never where it is less accurate."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kernelwright.evaluate.correctness import compare_outputs
from kernelwright.evaluate.executor import SubprocessExecutor
from kernelwright.evaluate.reference import Reference
from kernelwright.evaluate.request import JudgeRequest
from kernelwright.records import Precision, Tolerance

TOL = Tolerance(1e-2, 1e-2)
FIXTURES = Path(__file__).parents[2] / "fixtures" / "arbitration"


def test_a_near_tie_taken_the_other_way_passes_and_is_counted() -> None:
    # the exact answer lies between them: the reference took one side, the candidate the other
    ref, exact = torch.tensor([1.0, 5.0]), torch.tensor([1.25, 5.0], dtype=torch.float64)
    out = torch.tensor([1.5, 5.0])
    plain = compare_outputs([ref], [out], TOL)
    assert not plain["ok"] and plain["differ"]
    judged = compare_outputs([ref], [out], TOL, exact=[exact])
    assert judged["ok"] and judged["arbitrated"] == 1


def test_a_candidate_less_accurate_than_the_reference_still_fails() -> None:
    ref = torch.tensor([1.0, 2.0, 3.0])
    exact = ref.double()  # the reference is exact here: arbitration changes nothing
    out = torch.tensor([1.0, 2.5, 3.0])
    judged = compare_outputs([ref], [out], TOL, exact=[exact])
    assert not judged["ok"] and judged["differ"] and judged["arbitrated"] == 0
    assert "1 of 3 elements differ" in judged["message"]


def test_closer_to_the_exact_answer_than_the_reference_passes() -> None:
    ref, exact = torch.tensor([0.0, 7.0]), torch.tensor([2.0, 7.0], dtype=torch.float64)
    assert compare_outputs([ref], [exact.float()], TOL, exact=[exact])["ok"]
    # past the exact answer by more than the reference missed it by (plus the tolerance): no
    assert not compare_outputs([ref], [torch.tensor([4.1, 7.0])], TOL, exact=[exact])["ok"]


def test_arbitration_counts_the_accepted_elements_beside_a_failure() -> None:
    ref = torch.tensor([1.0, 1.0, 9.0])
    exact = torch.tensor([1.25, 1.0, 9.0], dtype=torch.float64)
    judged = compare_outputs([ref], [torch.tensor([1.5, 3.0, 9.0])], TOL, exact=[exact])
    assert not judged["ok"] and judged["arbitrated"] == 1
    assert "1 of 3 elements differ (and 1 more" in judged["message"]


def test_no_usable_exact_answer_arbitrates_nothing() -> None:
    ref, out = torch.tensor([1.0, 5.0]), torch.tensor([1.5, 5.0])
    for exact in (
        [torch.tensor([float("nan"), 5.0], dtype=torch.float64)],  # not finite there
        [torch.tensor([1.25], dtype=torch.float64)],  # another shape
        [torch.tensor([1, 5])],  # not floating
        [torch.tensor([1.25, 5.0]), torch.tensor([1.0])],  # another output count
    ):
        assert not compare_outputs([ref], [out], TOL, exact=exact)["ok"]


def test_non_finite_candidates_are_never_arbitrated() -> None:
    ref, exact = torch.tensor([1.0]), torch.tensor([1.25], dtype=torch.float64)
    for bad in (float("nan"), float("inf")):
        assert not compare_outputs([ref], [torch.tensor([bad])], TOL, exact=[exact])["ok"]


def _ill_conditioned(n: int = 1000, misses: int = 10) -> tuple[torch.Tensor, torch.Tensor]:
    """(reference, exact): the reference misses the exact answer by 0.5 at ``misses`` places
    (as a near-tie taken the wrong way does) and matches it elsewhere."""
    exact = torch.linspace(-3, 3, n, dtype=torch.float64)
    ref = exact.float().clone()
    ref[torch.arange(misses) * 7] += 0.5
    return ref, exact


def test_misses_elsewhere_as_many_and_as_large_as_the_references_pass() -> None:
    ref, exact = _ill_conditioned()
    out = exact.float().clone()
    out[torch.arange(10) * 7 + 3] -= 0.5  # ten other places, as far off as the reference's
    judged = compare_outputs([ref], [out], TOL, exact=[exact])
    assert judged["ok"], judged["message"]
    assert judged["arbitrated"] == 20  # the reference's ten places (closer) and its own ten


def test_more_misses_than_the_factor_allows_fail() -> None:
    ref, exact = _ill_conditioned(misses=2)
    out = exact.float().clone()
    out[torch.arange(9) * 11 + 5] += 0.5  # 9 > 4 x 2
    judged = compare_outputs([ref], [out], TOL, exact=[exact])
    assert not judged["ok"] and "9 of 1000 elements differ" in judged["message"]


def test_a_miss_larger_than_the_references_largest_fails() -> None:
    ref, exact = _ill_conditioned()
    out = exact.float().clone()
    out[3] += 1.5  # one place, three times the reference's largest miss
    assert not compare_outputs([ref], [out], TOL, exact=[exact])["ok"]


def test_a_non_finite_miss_is_never_excused() -> None:
    ref, exact = _ill_conditioned()
    out = exact.float().clone()
    out[3] = float("nan")
    assert not compare_outputs([ref], [out], TOL, exact=[exact])["ok"]


def _attention_bf16(q, k, v, split: bool):  # noqa: ANN001, ANN202 - tensors
    """bf16 attention with fp32 scores, summed over the head dim whole or in two halves (two
    honest orders of the same arithmetic)."""
    qf, kf = q.float(), k.float()
    if split:
        scores = qf[:, :32] @ kf[:, :32].T + qf[:, 32:] @ kf[:, 32:].T
    else:
        scores = qf @ kf.T
    p = torch.softmax(scores / 8.0, -1)
    return (p.bfloat16().float() @ v.float()).bfloat16()


def test_two_honest_orders_of_a_near_one_hot_attention_pass_either_way() -> None:
    """Inputs scaled by 64 make the softmax nearly one-hot; where two scores tie to rounding the
    orders take different keys, beyond any tolerance, each missing the float64 answer at a few
    elements of its own. One output of 6 heads x 1024 queries x 64, as the judge compares it."""
    gen = torch.Generator().manual_seed(0)
    tol = Precision.BF16.default_tolerance
    heads = [[(torch.randn(1024, 64, generator=gen) * 64).bfloat16() for _ in range(3)]
             for _ in range(6)]
    exact = torch.stack([torch.softmax(q.double() @ k.double().T / 8.0, -1) @ v.double()
                         for q, k, v in heads])
    one = torch.stack([_attention_bf16(q, k, v, False) for q, k, v in heads])
    other = torch.stack([_attention_bf16(q, k, v, True) for q, k, v in heads])
    assert not compare_outputs([one], [other], tol)["ok"]  # the plain comparison refuses
    assert not compare_outputs([other], [one], tol)["ok"]
    for ref, out in ((one, other), (other, one)):
        judged = compare_outputs([ref], [out], tol, exact=[exact])
        assert judged["ok"] and judged["arbitrated"] > 0, judged["message"]


def _request(precision: Precision) -> JudgeRequest:
    return JudgeRequest(task_path="rounded_shift.py", size="small", device="cpu",
                        precision=precision, tolerance=precision.default_tolerance, seed=1,
                        trials=1, distributions=False, cache_dir=None)


class RoundedShift(torch.nn.Module):
    def forward(self, x):
        return (x + 1000.0) - 1000.0


def test_a_normalised_error_past_its_bound_is_arbitrated_too() -> None:
    """Every element within atol, the normalised error past its bound (values near zero): the
    comparison asks for the float64 answer, and a candidate as close to it as the reference is
    passes; zeros, farther from it than the reference, do not."""
    exact = torch.linspace(-0.005, 0.005, 101, dtype=torch.float64)
    ref = (exact + 0.0004 * torch.cos(torch.arange(101.0, dtype=torch.float64))).float()
    plain = compare_outputs([ref], [exact.float()], TOL)
    assert not plain["ok"] and plain["differ"] and "normalised error" in plain["message"]
    judged = compare_outputs([ref], [exact.float()], TOL, exact=[exact])
    assert judged["ok"] and judged["norm_arbitrated"] == 1 and judged["arbitrated"] == 0
    zeros = compare_outputs([ref], [torch.zeros(101)], TOL, exact=[exact])
    assert not zeros["ok"] and "normalised error" in zeros["message"]


def test_the_exact_answer_is_the_policys_model_run_in_float64() -> None:
    ref = Reference(_request(Precision.BF16), RoundedShift, list, [])
    x = (torch.randn(8, 16) * 100).bfloat16()
    exact = ref.exact_outputs(3, [x])
    assert exact is not None and exact[0].dtype == torch.float64
    assert torch.equal(exact[0], x.double())  # exact arithmetic on the bf16 inputs
    reference = RoundedShift()(x)
    assert not compare_outputs([reference], [x], Precision.BF16.default_tolerance)["ok"]
    assert compare_outputs([reference], [x], Precision.BF16.default_tolerance, exact=exact)["ok"]


def test_a_model_without_a_float64_form_arbitrates_nothing() -> None:
    class NoDouble(RoundedShift):
        def double(self):
            raise RuntimeError("no float64 form")

    ref = Reference(_request(Precision.BF16), NoDouble, list, [])
    assert ref.exact_outputs(3, [torch.randn(4).bfloat16()]) is None


@pytest.mark.interpreter
@pytest.mark.parametrize(("task", "solution", "atol", "correct"), [
    ("rounded_shift", "exact_copy", None, True),
    ("rounded_shift", "shifted_copy", None, False),
    ("rounded_shift", "exact_copy", 1e-2, False),  # a user's --atol applies exactly
    ("small_after_cancellation", "exact_copy", None, True),  # the normalised error's turn
])
def test_the_judge_arbitrates_under_bf16(task: str, solution: str, atol: float | None,
                                         correct: bool,
                                         shared_executor: SubprocessExecutor) -> None:
    """End to end: the bf16 reference misses x by up to 4; a kernel returning x exactly is
    correct (its timed calls' outputs too, every one read back on the CPU), one 6 off is not.
    The same kernel is correct where the reference's cancellation leaves every element within
    atol but its normalised error past the bound."""
    pytest.importorskip("triton")
    from kernelwright.evaluate import evaluate
    from kernelwright.evaluate.options import EvalOptions

    verdict = evaluate(FIXTURES / f"{task}.py", FIXTURES / f"{solution}.py",
                       EvalOptions(device="cpu", precision=Precision.BF16, trials=2, atol=atol,
                                   timing=True, baselines=False, timeout_s=120),
                       executor=shared_executor)
    assert verdict.correct is correct, verdict.message
    assert correct or verdict.status.value == "incorrect", verdict.message
    arbitrated = [label for label in verdict.labels if "float64 answer" in label]
    assert bool(arbitrated) is correct
    assert (verdict.timing.candidate is not None) is correct


def test_an_answer_zero_but_for_rounding_accepts_another_orders_noise() -> None:
    """The mean of a group-normalised tensor is zero but for rounding: the fp32 reference and an
    honest kernel each return their own noise (normalised error against each other ~2, and 30
    for a kernel that sums sequentially). With no signal in the reference, the element-wise
    tolerance decides; a tiny answer the reference does carry still refuses zeros and noise
    past REF_ERROR_FACTOR times the reference's."""
    gen = torch.Generator().manual_seed(0)
    exact = torch.randn(64, generator=gen, dtype=torch.float64) * 1e-17
    ref = (exact + torch.randn(64, generator=gen, dtype=torch.float64) * 7e-8).float()
    for scale in (1.4e-7, 2e-6):
        honest = (exact + torch.randn(64, generator=gen, dtype=torch.float64) * scale).float()
        assert "normalised error" in compare_outputs([ref], [honest], TOL)["message"]
        judged = compare_outputs([ref], [honest], TOL, exact=[exact])
        assert judged["ok"] and judged["norm_arbitrated"] == 1
    assert not compare_outputs([ref], [ref + 0.02], TOL, exact=[exact])["ok"]  # past atol
    # a tiny answer the reference carries (its own error a thousandth of it)
    tiny = torch.randn(64, generator=gen, dtype=torch.float64) * 1e-6
    carried = (tiny + torch.randn(64, generator=gen, dtype=torch.float64) * 1e-9).float()
    assert not compare_outputs([carried], [torch.zeros(64)], TOL, exact=[tiny])["ok"]
    noisy = (tiny + torch.randn(64, generator=gen, dtype=torch.float64) * 1e-7).float()
    assert not compare_outputs([carried], [noisy], TOL, exact=[tiny])["ok"]  # 100x its error
    close = (tiny + torch.randn(64, generator=gen, dtype=torch.float64) * 2e-9).float()
    assert compare_outputs([carried], [close], TOL, exact=[tiny])["ok"]
