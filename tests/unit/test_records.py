import json

from kernelwright.records import (
    Candidate,
    DeviceInfo,
    Precision,
    SpeedOfLight,
    Status,
    Timing,
    TimingStats,
    Tolerance,
    Verdict,
    Violation,
)


def test_policy_tolerances_follow_the_issue():
    assert Precision.FP32.default_tolerance == Tolerance(1e-4, 1e-4)
    assert Precision.TF32.default_tolerance == Tolerance(1e-2, 1e-2)
    assert Precision.BF16.default_tolerance == Tolerance(1e-2, 1e-2)


def test_verdict_round_trips_through_json():
    stats = TimingStats(1.0, 1.1, 0.9, 0.05, 100)
    verdict = Verdict(
        status=Status.REJECTED,
        correct=False,
        message="m",
        max_abs_err=1e-3,
        trials=5,
        precision=Precision.BF16,
        tolerance=Tolerance(0.01, 0.02),
        timing=Timing(candidate=stats, eager=stats, speedup_vs_eager=1.0, notes=("a",)),
        sol=SpeedOfLight(10, 20, 0.1, "memory", 0.5, 4300.0, 790.0, "x"),
        violations=(Violation("sandbox", "tried"),),
        flags=("f",),
        device=DeviceInfo("cuda", "H200", "2.11", "3.6", "13.0", False),
        seed=7,
    )
    again = Verdict.from_dict(json.loads(json.dumps(verdict.to_dict())))
    assert again == verdict
    assert verdict.to_dict()["status"] == "rejected"


def test_candidate_identity_is_its_source():
    assert Candidate("x = 1").sha256 == Candidate("x = 1", origin="llm").sha256
    assert Candidate("x = 1").sha256 != Candidate("x = 2").sha256
