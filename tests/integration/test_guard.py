"""The guard: every adversarial candidate is refused for the right reason, every honest one is
accepted. Real harness (judge, confined candidate processes), Triton's interpreter on the CPU.

Candidates of one task share a session (one judge); each still runs in a process of its own.
"""

import pytest

from kernelwright.evaluate import EvalOptions, evaluate
from kernelwright.evaluate.executor import SubprocessExecutor
from kernelwright.records import Candidate, Status

pytestmark = pytest.mark.interpreter

OPTS = EvalOptions(device="cpu", timeout_s=60, trials=3, baselines=False)  # not about speed

ADVERSARIAL = [
    # (solution, expected status, guard check that must fire, or a message fragment)
    ("linear_relu__hack_bf16", Status.INCORRECT, "elements differ"),
    ("linear_relu__hack_delegate", Status.REJECTED, "framework-delegation"),
    ("mse_loss__hack_constant", Status.INCORRECT, "elements differ"),
    ("mse_loss__hack_subsample", Status.INCORRECT, "elements differ"),
    ("row_argmax__hack_half_columns", Status.INCORRECT, "exact match required"),
    ("row_sum_variants__hack_hardcoded", Status.REJECTED, "shape-variants"),
    ("softmax_rows__hack_cache_after_warmup", Status.REJECTED, "timed-outputs"),
    ("softmax_rows__hack_copy_kernel", Status.REJECTED, "framework-delegation"),
    ("softmax_rows__hack_exec_hidden", Status.REJECTED, "filesystem-and-dynamic-code"),
    ("softmax_rows__hack_gc_reference", Status.REJECTED, "reference-access"),
    ("softmax_rows__hack_half_precision", Status.REJECTED, "precision-policy"),
    ("softmax_rows__hack_in_place", Status.REJECTED, "input-mutation"),
    ("softmax_rows__hack_inherit_model", Status.REJECTED, "reference-access"),
    ("softmax_rows__hack_lazy_output", Status.REJECTED, "plain-tensor-outputs"),
    ("softmax_rows__hack_one_block", Status.REJECTED, "unwritten-output"),
    ("softmax_rows__hack_partial_rows", Status.REJECTED, "unwritten-output"),
    ("softmax_rows__hack_patch_perf_counter", Status.REJECTED, "monkey-patching"),
    ("softmax_rows__hack_patch_timer", Status.REJECTED, "harness-integrity"),
    ("softmax_rows__hack_patch_torch", Status.REJECTED, "monkey-patching"),
    ("softmax_rows__hack_precision_flag", Status.REJECTED, "precision-policy"),
    ("softmax_rows__hack_read_proc", Status.REJECTED, "sandbox"),
    ("softmax_rows__hack_scribble_input", Status.REJECTED, "input-mutation"),
    ("softmax_rows__hack_stale_empty", Status.REJECTED, "unwritten-output"),
    ("softmax_rows__hack_state_drift", Status.REJECTED, "timed-outputs"),
    ("softmax_rows__hack_suppress_fallback", Status.REJECTED, "exception-fallback-runtime"),
    ("softmax_rows__hack_thread_hidden", Status.REJECTED, "background-threads"),
    ("softmax_rows__hack_thread_static", Status.REJECTED, "threads-and-processes"),
    ("softmax_rows__hack_token_kernel", Status.REJECTED, "kernel-result-used"),
    ("softmax_rows__hack_torch_only", Status.REJECTED, "custom-kernel"),
    ("softmax_rows__hack_try_fallback", Status.REJECTED, "exception-fallback"),
]

HONEST = [
    "linear_relu__hybrid",
    "long_scan__honest",
    "mse_loss__atomics",
    "row_argmax__honest",
    "row_sum_variants__honest",
    "scale_bias__honest",
    "scale_bias__preallocated",
    "softmax_rows__honest",
    "softmax_rows__multi_kernel",
]


# A second right refusal: a constant answer, or a mean over one element in four, lands within
# the tolerance of a trial by chance (now and then), and precision-policy refuses that trial
# instead (its error against float64 is hundreds of times the fp32 reference's); float16
# softmax values hide under atol on most draws, but now and then one element of a trial misses
# it, and the task's own tolerance refuses it first
OR_ELSE = {
    "mse_loss__hack_constant": (Status.REJECTED, "precision-policy"),
    "mse_loss__hack_subsample": (Status.REJECTED, "precision-policy"),
    "softmax_rows__hack_half_precision": (Status.INCORRECT, "elements differ"),
}


def _task(solution):
    return solution.split("__")[0]


def _judge(fixtures, session_for, solution):
    session = session_for(fixtures / "tasks" / f"{_task(solution)}.py", OPTS)
    source = (fixtures / "solutions" / f"{solution}.py").read_text()
    return session.evaluate(Candidate(source))


@pytest.mark.parametrize(
    ("solution", "status", "reason"), ADVERSARIAL, ids=[a[0] for a in ADVERSARIAL]
)
def test_adversarial_candidate_is_refused(fixtures, session_for, solution, status, reason):
    v = _judge(fixtures, session_for, solution)
    if solution in OR_ELSE and v.status is OR_ELSE[solution][0]:
        status, reason = OR_ELSE[solution]
    assert v.status is status, f"{v.status}: {v.message}"
    assert not v.correct
    if status is Status.REJECTED:
        fired = {x.check for x in v.violations}
        assert reason in fired, f"{reason} not in {fired}: {v.message}"
        assert all(x.reason for x in v.violations)
    else:
        assert reason in v.message


@pytest.mark.parametrize("solution", HONEST)
def test_honest_candidate_is_accepted(fixtures, session_for, solution):
    v = _judge(fixtures, session_for, solution)
    assert v.status is Status.CORRECT, f"{v.message} {v.violations}"
    assert v.violations == ()
    assert v.timing.candidate is not None and v.timing.candidate.median_ms > 0
    if solution == "linear_relu__hybrid":
        assert any(label.startswith("hybrid") for label in v.labels)


def test_a_fresh_evaluate_judges_like_a_session(fixtures):
    """``evaluate`` (a session of one, no spare process) reaches the same verdicts."""
    task = fixtures / "tasks" / "softmax_rows.py"
    # keeping no spare, as evaluate's own executor does; one for both evaluations, so that its
    # fork server imports torch and Triton once
    with SubprocessExecutor(prestart=0) as executor:
        for solution, status in (("softmax_rows__honest", Status.CORRECT),
                                 ("softmax_rows__hack_state_drift", Status.REJECTED)):
            v = evaluate(task, fixtures / "solutions" / f"{solution}.py", OPTS, executor=executor)
            assert v.status is status, v.message
            assert executor.spare_pids == ()


# Checks whose attacks need a GPU (tests/gpu) or a time no interpreter reaches.
NOT_ON_THE_CPU = {
    "clock-agreement": "compares CUDA events",
    "speed-of-light": "needs a GPU's times",
}
# Checks that run only under a constraint, exercised by their own tests.
UNDER_A_CONSTRAINT = {
    "constraint-shape-range": "tests/integration/test_constraint_properties.py",
}


def test_every_check_is_documented_and_exercised():
    import tomllib
    from pathlib import Path

    from kernelwright.evaluate.guard.registry import all_checks

    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "guard.md").read_text()
    manifest = tomllib.loads((root / "tests/fixtures/adversarial/manifest.toml").read_text())
    exercised = {a[2] for a in ADVERSARIAL if a[1] is Status.REJECTED}
    for attack in manifest["attack"]:
        exercised.update(attack.get("checks", []))
    for check in all_checks():
        assert f"`{check.name}`" in doc, f"docs/guard.md does not describe {check.name}"
        assert check.catches and check.how
        if check.name in UNDER_A_CONSTRAINT:
            assert check.name in (root / UNDER_A_CONSTRAINT[check.name]).read_text()
        elif check.name not in NOT_ON_THE_CPU:
            assert check.name in exercised, f"no adversarial fixture for {check.name}"
