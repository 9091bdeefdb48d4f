"""Every status from plain data: no subprocess, no GPU. The verdict comes from the judge's
report and how the process ended, nothing else."""

import pytest

from kernelwright.evaluate.executor import JobResult
from kernelwright.evaluate.guard.registry import GuardContext, run_checks
from kernelwright.evaluate.verdict import Evidence, build_verdict
from kernelwright.records import Precision, Status, Tolerance, Violation

PREPARED = {
    "ok": True,
    "precision": "fp32",
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


def evidence(job, violations=(), baselines=None, device="cuda"):
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
        violations=tuple(violations),
        baselines=baselines or {},
        baselines_cached=False,
        timeout_s=30,
        duration_s=1.0,
    )


def job(report, returncode=0, killed="", tail="boom\n"):
    return JobResult(report, returncode, tail, 1.0, killed=killed)


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


def report(runs=None, timing=None, failure=None, observed=None):
    return {
        "failure": failure,
        "runs": [ok_run(), ok_run("trial 2 (task)")] if runs is None else runs,
        "observed": observed or {"launches": 1, "op_counts": {"empty": 1}},
        "timing": timing if timing is not None else {
            "samples_ms": [0.002] * 9, "events_ms": [0.0019] * 9, "method": "judge's clock"},
        "ablation": {},
        "observations": {},
    }


def failure(status, message="why", phase="trial 1 (task)"):
    return report(runs=[], timing={}, failure={"status": status, "message": message,
                                                "phase": phase})


def test_timeout():
    v = build_verdict(evidence(job(failure("timeout"))))
    assert v.status is Status.TIMEOUT and "30s" in v.message and not v.correct


def test_crash_names_the_signal_and_phase():
    v = build_verdict(evidence(job(failure("crashed"), returncode=-11)))
    assert v.status is Status.RUNTIME_ERROR
    assert "SIGSEGV" in v.message and "trial 1" in v.message and "boom" in v.message


def test_a_process_killed_for_its_memory_says_so():
    v = build_verdict(evidence(job(failure("crashed"), returncode=-9, killed="held 9 GB")))
    assert v.status is Status.RUNTIME_ERROR and "held 9 GB" in v.message


@pytest.mark.parametrize("status", ["compile_error", "runtime_error"])
def test_errors_reported_by_the_process(status):
    v = build_verdict(evidence(job(failure(status))))
    assert v.status is Status(status) and v.message == "why"


def test_mismatch_is_incorrect_with_the_trial_named():
    bad = ok_run("trial 2 (scaled)") | {"ok": False, "message": "output 0: 3 differ"}
    v = build_verdict(evidence(job(report(runs=[ok_run(), bad]))))
    assert v.status is Status.INCORRECT and v.message.startswith("trial 2 (scaled)")
    assert v.trials_passed == 1


def test_fewer_trials_than_asked_is_incorrect():
    v = build_verdict(evidence(job(report(runs=[ok_run()]))))
    assert v.status is Status.INCORRECT and "not every trial" in v.message


def test_violation_outranks_a_runtime_error():
    v = build_verdict(
        evidence(job(failure("runtime_error")), violations=[Violation("sandbox", "tried /proc/1")])
    )
    assert v.status is Status.REJECTED and v.violations[0].check == "sandbox"


def test_static_rejection_never_ran():
    v = build_verdict(evidence(None, violations=[Violation("monkey-patching", "line 3")]))
    assert v.status is Status.REJECTED and "monkey-patching" in v.message


def test_correct_with_speedups_sol_and_review_flags():
    baselines = {"eager": {"samples_ms": [0.05] * 5}, "compile": {"samples_ms": [0.03] * 5}}
    v = build_verdict(evidence(job(report()), baselines=baselines))
    assert v.status is Status.CORRECT and v.correct
    assert v.timing.speedup_vs_eager == pytest.approx(25.0)
    assert v.sol is not None and v.sol.bound == "memory"
    assert v.sol.floor_ms == pytest.approx(0.001)
    assert v.sol.fraction == pytest.approx(0.5)
    assert any("exceeds 10x" in f for f in v.flags)


def test_a_baseline_timed_past_the_hardware_s_peak_marks_the_clock_off():
    # 4.3 MB at the H200's 4.8 TB/s datasheet peak takes 0.9 microseconds: eager at 0.5 cannot be
    impossible = {"eager": {"samples_ms": [0.0005] * 5}, "compile": {"samples_ms": [0.03] * 5}}
    v = build_verdict(evidence(job(report()), baselines=impossible))
    assert v.correct and any("eager timed at" in f and "clock is off" in f for f in v.flags)
    assert not any("torch.compile timed at" in f for f in v.flags)
    plausible = {"eager": {"samples_ms": [0.05] * 5}, "compile": {"samples_ms": [0.03] * 5}}
    v = build_verdict(evidence(job(report()), baselines=plausible))
    assert not any("clock is off" in f for f in v.flags)


def _runtime(rep, device="cuda"):
    return run_checks("runtime", GuardContext("", None, device, PREPARED, rep))


def test_beating_the_speed_of_light_is_refused_not_flagged():
    fast = report(timing={"samples_ms": [0.0005] * 5, "events_ms": [0.0005] * 5, "method": ""})
    fired = {v.check for v in _runtime(fast)}
    assert "speed-of-light" in fired
    near = report(timing={"samples_ms": [0.00098] * 5, "events_ms": [0.0009] * 5, "method": ""})
    assert "speed-of-light" not in {v.check for v in _runtime(near)}  # measurement noise


def test_the_judges_clock_must_see_the_processes_own_event_time():
    disagree = report(timing={"samples_ms": [0.01] * 5, "events_ms": [0.05] * 5, "method": ""})
    assert "clock-agreement" in {v.check for v in _runtime(disagree)}
    agree = report(timing={"samples_ms": [0.05] * 5, "events_ms": [0.045] * 5, "method": ""})
    assert "clock-agreement" not in {v.check for v in _runtime(agree)}


def test_a_gap_within_the_judges_fixed_cost_per_call_is_not_refused():
    """A few-microsecond call can read as 0 after the calibrated cost is subtracted."""
    within = report(timing={"samples_ms": [0.0] * 5, "events_ms": [0.0034] * 5,
                            "fixed_ms": [0.02] * 5, "method": ""})
    assert "clock-agreement" not in {v.check for v in _runtime(within)}
    beyond = report(timing={"samples_ms": [0.01] * 5, "events_ms": [0.5] * 5,
                            "fixed_ms": [0.02] * 5, "method": ""})
    assert "clock-agreement" in {v.check for v in _runtime(beyond)}


def test_a_late_or_wrong_timed_output_is_refused():
    late = report(timing={"samples_ms": [1.0], "events_ms": [], "method": "", "checked": [
        {"ok": True, "label": "timed call 3 of batch 2", "late": "output 0: not yet the answer"}]})
    wrong = report(timing={"samples_ms": [1.0], "events_ms": [], "method": "", "checked": [
        {"ok": False, "label": "timed call 1 of batch 4", "message": "900 differ"}]})
    assert "timed-outputs" in {v.check for v in _runtime(late)}
    assert "timed-outputs" in {v.check for v in _runtime(wrong)}


def test_a_timed_call_must_launch_each_kernel_a_checked_call_launched():
    def rep(names):
        return report(observed={"launches": 2, "launch_names": {"softmax": 1, "scale": 1}},
                      timing={"samples_ms": [1.0], "events_ms": [], "method": "",
                              "launches_per_call": [2.0], "launch_names_per_call": [names]})

    swapped = {v.reason for v in _runtime(rep({"touch": 1.0, "scale": 1.0}))
               if v.check == "timed-kernels"}
    assert swapped == {"a timed call launched softmax 0 time(s), a checked call 1"}
    honest = rep({"softmax": 1.0, "scale": 1.0})
    assert "timed-kernels" not in {v.check for v in _runtime(honest)}


def test_a_timed_call_must_launch_each_kernel_over_as_many_programs():
    def rep(programs):
        return report(observed={"launches": 1, "launch_names": {"softmax": 1},
                                "launch_programs": {"softmax": 4096}},
                      timing={"samples_ms": [1.0], "events_ms": [], "method": "",
                              "launches_per_call": [1.0], "launch_names_per_call": [{"softmax": 1}],
                              "launch_programs_per_call": [{"softmax": 4096.0}, programs]})

    token = {v.reason for v in _runtime(rep({"softmax": 1.0})) if v.check == "timed-kernels"}
    assert token == {"a timed call launched softmax over 1 program(s), a checked call over 4096"}
    assert "timed-kernels" in {v.check for v in _runtime(rep({"softmax": 2048.0}))}
    # a grid that depends on the inputs' values may vary a little between calls
    assert "timed-kernels" not in {v.check for v in _runtime(rep({"softmax": 3900.0}))}
    assert "timed-kernels" not in {v.check for v in _runtime(rep({"softmax": 8192.0}))}


def test_a_framework_result_equal_to_the_answer_is_delegation():
    rep = report(observed={"launches": 1, "op_counts": {"erf": 1, "mul": 2},
                           "answer_from_framework": ["mul"]})
    assert "framework-delegation" in {v.check for v in _runtime(rep)}


def test_cpu_timings_are_labelled_and_never_flagged():
    v = build_verdict(evidence(job(report()), device="cpu",
                               baselines={"eager": {"samples_ms": [1.0]}}))
    assert v.status is Status.CORRECT and not v.timing.representative and v.flags == ()
    assert any("not representative" in n for n in v.timing.notes)
    assert "speed-of-light" not in {v.check for v in _runtime(report(), device="cpu")}
    fast = report(timing={"samples_ms": [0.0005] * 5, "events_ms": [], "method": ""})
    assert "speed-of-light" in {v.check for v in _runtime(fast, device="cpu")}  # every device


def test_hybrid_label():
    rep = report(observed={"op_counts": {"mm": 1, "empty": 1}, "launches": 1})
    v = build_verdict(evidence(job(rep)))
    assert v.labels and v.labels[0].startswith("hybrid")


def test_a_widened_atol_is_the_verdicts_tolerance_and_labelled():
    widened = {"atol": [2.4e-3, None], "widened": ["output 0: atol=0.0024, widened from 0.0001"]}
    rep = report(runs=[ok_run() | widened, ok_run("trial 2 (task)") | {"atol": [1e-4, None]}])
    v = build_verdict(evidence(job(rep)))
    assert v.status is Status.CORRECT
    assert v.tolerance == Tolerance(2.4e-3, 1e-4)
    assert any("atol widened from 0.0001 to up to 0.0024" in label for label in v.labels)


def test_reports_without_atol_keep_the_requested_tolerance():
    v = build_verdict(evidence(job(report())))
    assert v.tolerance == Tolerance(1e-4, 1e-4) and v.labels == ()
