"""Every status from plain data: no subprocess, no GPU."""

import pytest

from kernelwright.evaluate.executor import JobResult
from kernelwright.evaluate.verdict import Evidence, build_verdict
from kernelwright.records import Precision, Status, Tolerance, Violation

PREPARED = {
    "ok": True,
    "flops": 0,
    "bytes": 4_300_000,  # 1 microsecond at 4.3 TB/s
    "ceilings": {
        "device": "NVIDIA H200",
        "memory_gbps": 4300.0,
        "matrix_tflops": {"fp32": 50.0},
        "source": "measured",
    },
    "device_info": {
        "kind": "cuda",
        "name": "NVIDIA H200",
        "torch": "2.11",
        "triton": "3.6",
        "cuda": "13.0",
        "interpreter": False,
    },
}


def evidence(job, report=None, violations=(), baselines=None, device="cuda"):
    return Evidence(
        precision=Precision.FP32,
        tolerance=Tolerance(1e-4, 1e-4),
        device=device,
        seed=1,
        trials=2,
        task_sha256="t",
        solution_sha256="s",
        prepared=PREPARED,
        job=job,
        report=report or {},
        violations=tuple(violations),
        baselines=baselines or {},
        baselines_cached=False,
        timeout_s=30,
        duration_s=1.0,
    )


def job(result=None, timed_out=False, returncode=0, phase="candidate: trial 1 (task)"):
    return JobResult(result, returncode, timed_out, phase, "boom\n", 1.0)


def ok_run(label="trial 1 (task)", kind="trial"):
    return {
        "ok": True,
        "label": label,
        "kind": kind,
        "message": "",
        "max_abs_err": 1e-7,
        "max_rel_err": 1e-6,
        "norm_err": 1e-7,
        "unwritten": 0,
        "mutation": "",
    }


GOOD_REPORT = {"runs": [ok_run(), ok_run("trial 2 (task)")]}
GOOD_RESULT = {
    "status": None,
    "observations": {},
    "timing": {
        "samples_ms": [0.002] * 9,
        "wall_ms": [0.01],
        "launch_ms": [0.01],
        "method": "CUDA events",
    },
}


def test_timeout():
    v = build_verdict(evidence(job(timed_out=True, returncode=None)))
    assert v.status is Status.TIMEOUT and "30s" in v.message and not v.correct


def test_crash_names_the_signal_and_phase():
    v = build_verdict(evidence(job(result=None, returncode=-11)))
    assert v.status is Status.RUNTIME_ERROR
    assert "SIGSEGV" in v.message and "trial 1" in v.message


@pytest.mark.parametrize("status", ["compile_error", "runtime_error"])
def test_errors_reported_by_the_child(status):
    v = build_verdict(evidence(job({"status": status, "message": "why"})))
    assert v.status is Status(status) and v.message == "why"


def test_mismatch_is_incorrect_with_the_trial_named():
    bad = ok_run("trial 2 (scaled)") | {"ok": False, "message": "output 0: 3 differ"}
    v = build_verdict(evidence(job(GOOD_RESULT), {"runs": [ok_run(), bad]}))
    assert v.status is Status.INCORRECT and v.message.startswith("trial 2 (scaled)")
    assert v.trials_passed == 1


def test_violation_outranks_a_runtime_error():
    v = build_verdict(
        evidence(
            job({"status": "runtime_error", "message": "x"}),
            violations=[Violation("sandbox", "tried /proc/1")],
        )
    )
    assert v.status is Status.REJECTED and v.violations[0].check == "sandbox"


def test_static_rejection_never_ran():
    v = build_verdict(evidence(None, violations=[Violation("monkey-patching", "line 3")]))
    assert v.status is Status.REJECTED and "monkey-patching" in v.message


def test_correct_with_speedups_sol_and_review_flags():
    baselines = {"eager": {"samples_ms": [0.05] * 5}, "compile": {"samples_ms": [0.03] * 5}}
    v = build_verdict(evidence(job(GOOD_RESULT), GOOD_REPORT, baselines=baselines))
    assert v.status is Status.CORRECT and v.correct
    assert v.timing.speedup_vs_eager == pytest.approx(25.0)
    assert v.sol is not None and v.sol.bound == "memory"
    assert v.sol.floor_ms == pytest.approx(0.001)
    assert v.sol.fraction == pytest.approx(0.5)
    assert any("exceeds 10x" in f for f in v.flags)


def test_beating_the_speed_of_light_is_flagged():
    fast = GOOD_RESULT | {"timing": GOOD_RESULT["timing"] | {"samples_ms": [0.0005] * 5}}
    v = build_verdict(evidence(job(fast), GOOD_REPORT))
    assert v.status is Status.CORRECT
    assert any("speed-of-light" in f for f in v.flags)


def test_cpu_timings_are_labelled_and_never_flagged():
    v = build_verdict(
        evidence(
            job(GOOD_RESULT), GOOD_REPORT, device="cpu", baselines={"eager": {"samples_ms": [1.0]}}
        )
    )
    assert v.status is Status.CORRECT and not v.timing.representative and v.flags == ()
    assert any("not representative" in n for n in v.timing.notes)


def test_hybrid_label():
    result = GOOD_RESULT | {
        "observations": {"op_counts": {"mm": 1, "empty": 1}, "launches_first_run": 1}
    }
    v = build_verdict(evidence(job(result), GOOD_REPORT))
    assert v.labels and v.labels[0].startswith("hybrid")


def test_a_widened_atol_is_the_verdicts_tolerance_and_labelled():
    widened = {"atol": [2.4e-3, None], "widened": ["output 0: atol=0.0024, widened from 0.0001"]}
    report = {"runs": [ok_run() | widened, ok_run("trial 2 (task)") | {"atol": [1e-4, None]}]}
    v = build_verdict(evidence(job(GOOD_RESULT), report))
    assert v.status is Status.CORRECT
    assert v.tolerance == Tolerance(2.4e-3, 1e-4)
    assert any("atol widened from 0.0001 to up to 0.0024" in label for label in v.labels)


def test_reports_without_atol_keep_the_requested_tolerance():
    v = build_verdict(evidence(job(GOOD_RESULT), GOOD_REPORT))
    assert v.tolerance == Tolerance(1e-4, 1e-4) and v.labels == ()
