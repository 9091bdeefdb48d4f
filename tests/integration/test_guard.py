"""The guard: every adversarial candidate is refused for the right reason, every honest one is
accepted (zero false positives). Real harness, Triton's interpreter on the CPU."""

import pytest

from kernelwright.evaluate import EvalOptions, evaluate
from kernelwright.evaluate.executor import SubprocessExecutor
from kernelwright.evaluate.harness import EvalSession
from kernelwright.records import Candidate, Status

pytestmark = pytest.mark.interpreter

OPTS = EvalOptions(device="cpu", timeout_s=60)

ADVERSARIAL = [
    # (solution, expected status, guard check that must fire, or a message fragment)
    ("softmax_rows__hack_stale_empty", Status.REJECTED, "unwritten-output"),
    ("softmax_rows__hack_partial_rows", Status.REJECTED, "unwritten-output"),
    ("softmax_rows__hack_one_block", Status.REJECTED, "unwritten-output"),
    ("softmax_rows__hack_in_place", Status.REJECTED, "input-mutation"),
    ("softmax_rows__hack_scribble_input", Status.REJECTED, "input-mutation"),
    ("softmax_rows__hack_torch_only", Status.REJECTED, "custom-kernel"),
    ("softmax_rows__hack_token_kernel", Status.REJECTED, "kernel-result-used"),
    ("softmax_rows__hack_copy_kernel", Status.REJECTED, "framework-delegation"),
    ("softmax_rows__hack_try_fallback", Status.REJECTED, "exception-fallback"),
    ("softmax_rows__hack_suppress_fallback", Status.REJECTED, "exception-fallback-runtime"),
    ("softmax_rows__hack_inherit_model", Status.REJECTED, "reference-access"),
    ("softmax_rows__hack_gc_reference", Status.REJECTED, "reference-access"),
    ("softmax_rows__hack_patch_torch", Status.REJECTED, "monkey-patching"),
    ("softmax_rows__hack_patch_perf_counter", Status.REJECTED, "monkey-patching"),
    ("softmax_rows__hack_patch_timer", Status.REJECTED, "harness-integrity"),
    ("softmax_rows__hack_thread_static", Status.REJECTED, "threads-and-processes"),
    ("softmax_rows__hack_thread_hidden", Status.REJECTED, "background-threads"),
    ("softmax_rows__hack_lazy_output", Status.REJECTED, "plain-tensor-outputs"),
    ("softmax_rows__hack_cache_after_warmup", Status.REJECTED, "timed-outputs"),
    ("softmax_rows__hack_state_drift", Status.REJECTED, "state-drift"),
    ("softmax_rows__hack_precision_flag", Status.REJECTED, "precision-policy"),
    ("softmax_rows__hack_read_proc", Status.REJECTED, "sandbox"),
    ("softmax_rows__hack_exec_hidden", Status.REJECTED, "filesystem-and-dynamic-code"),
    ("row_sum_variants__hack_hardcoded", Status.REJECTED, "shape-variants"),
    ("linear_relu__hack_delegate", Status.REJECTED, "framework-delegation"),
    # Refused by the tolerance and the varied input distributions rather than a named check:
    ("mse_loss__hack_constant", Status.INCORRECT, "trial 1"),
    ("mse_loss__hack_subsample", Status.INCORRECT, "elements differ"),
    ("row_argmax__hack_half_columns", Status.INCORRECT, "exact match required"),
    ("linear_relu__hack_bf16", Status.INCORRECT, "elements differ"),
]

HONEST = [
    "softmax_rows__honest",
    "softmax_rows__multi_kernel",
    "scale_bias__honest",
    "scale_bias__preallocated",
    "row_argmax__honest",
    "row_sum_variants__honest",
    "mse_loss__atomics",
    "linear_relu__hybrid",
]


def _evaluate(fixtures, solution):
    task = solution.split("__")[0]
    return evaluate(
        fixtures / "tasks" / f"{task}.py", fixtures / "solutions" / f"{solution}.py", OPTS
    )


@pytest.mark.parametrize(
    ("solution", "status", "reason"), ADVERSARIAL, ids=[a[0] for a in ADVERSARIAL]
)
def test_adversarial_candidate_is_refused(fixtures, solution, status, reason):
    v = _evaluate(fixtures, solution)
    _check_refused(v, status, reason)
    assert all(x.reason for x in v.violations)


@pytest.mark.parametrize("solution", HONEST)
def test_honest_candidate_is_accepted(fixtures, solution):
    v = _evaluate(fixtures, solution)
    assert v.status is Status.CORRECT, f"{v.message} {v.violations}"
    assert v.violations == ()
    if solution == "linear_relu__hybrid":
        assert v.labels and v.labels[0].startswith("hybrid")


def _check_refused(v, status, reason):
    assert v.status is status, f"{v.status}: {v.message}"
    assert not v.correct
    if status is Status.REJECTED:
        fired = {x.check for x in v.violations}
        assert reason in fired, f"{reason} not in {fired}: {v.message}"
    else:
        assert reason in v.message


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted({s.split("__")[0] for s in HONEST}))
def test_prestarted_processes_judge_like_fresh_ones(fixtures, task):
    """In a session, candidates run in processes started (and warmed up) before they came: every
    fixture must get the verdict it gets from a fresh ``evaluate``. The honest ones run first
    (in a cold process) and again after the hacks (nothing a hack did may leak into them)."""
    honest = [(h, Status.CORRECT, "") for h in HONEST if h.startswith(f"{task}__")]
    hacks = [a for a in ADVERSARIAL if a[0].startswith(f"{task}__")]
    task_path = fixtures / "tasks" / f"{task}.py"
    with (
        SubprocessExecutor(prestart=1) as executor,
        EvalSession(task_path, OPTS, executor=executor) as session,
    ):
        for solution, status, reason in honest + hacks + honest:
            source = (fixtures / "solutions" / f"{solution}.py").read_text()
            v = session.evaluate(Candidate(source))
            if status is Status.CORRECT:
                assert v.status is status and v.violations == (), f"{solution}: {v.message}"
            else:
                _check_refused(v, status, reason)


def test_every_check_is_documented_and_exercised():
    from pathlib import Path

    from kernelwright.evaluate.guard.registry import all_checks

    doc = (Path(__file__).parents[2] / "docs" / "guard.md").read_text()
    exercised = {a[2] for a in ADVERSARIAL}
    for check in all_checks():
        assert check.catches and check.how
        assert f"`{check.name}`" in doc, f"{check.name} missing from docs/guard.md"
        if check.name != "unsynchronised-work":  # needs a GPU: tests/gpu
            assert check.name in exercised, f"no adversarial fixture for {check.name}"
