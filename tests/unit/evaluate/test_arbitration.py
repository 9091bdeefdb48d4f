"""Elements outside the reference's tolerance are arbitrated by the float64 answer: a candidate
passes where it is no farther from it than the reference, never where it is less accurate."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kernelwright.evaluate.correctness import compare_outputs
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


def _request(precision: Precision) -> JudgeRequest:
    return JudgeRequest(task_path="rounded_shift.py", size="small", device="cpu",
                        precision=precision, tolerance=precision.default_tolerance, seed=1,
                        trials=1, distributions=False, cache_dir=None)


class RoundedShift(torch.nn.Module):
    def forward(self, x):
        return (x + 1000.0) - 1000.0


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
@pytest.mark.parametrize(("solution", "correct"), [("exact_copy", True), ("shifted_copy", False)])
def test_the_judge_arbitrates_under_bf16(solution: str, correct: bool) -> None:
    """End to end: the bf16 reference misses x by up to 4; a kernel returning x exactly is
    correct (its timed calls' outputs too, every one read back on the CPU), one 6 off is not."""
    pytest.importorskip("triton")
    from kernelwright.evaluate import evaluate
    from kernelwright.evaluate.options import EvalOptions

    verdict = evaluate(FIXTURES / "rounded_shift.py", FIXTURES / f"{solution}.py",
                       EvalOptions(device="cpu", precision=Precision.BF16, trials=2,
                                   timing=True, baselines=False, timeout_s=120))
    assert verdict.correct is correct, verdict.message
    assert correct or verdict.status.value == "incorrect", verdict.message
    arbitrated = [label for label in verdict.labels if "float64 answer" in label]
    assert bool(arbitrated) is correct
    assert (verdict.timing.candidate is not None) is correct
