"""The memory plan: what the judge and the candidate may hold together stays within the device's
usable memory, luxuries are given up in order, and a task too large gets a plain message."""

import pytest

from kernelwright.evaluate.memory import (
    CONTEXT_BYTES,
    INTERPRETER_CALL_BYTES,
    USABLE_FRACTION,
    Footprint,
    TooLarge,
    judge_bytes,
    plan_memory,
    refuse_unsized_on_cpu,
    smallest_free_b,
)

GB = 10**9
RUNS = 5
FREE = 150 * GB  # an H200's free memory


def budget(free: int) -> int:
    return int(USABLE_FRACTION * free) - 2 * CONTEXT_BYTES


def total(fp: Footprint, free: int) -> int:
    plan = plan_memory(fp, free, RUNS, want_float64=True)
    judge = judge_bytes(fp, RUNS, cache=plan.cache_runs, float64=plan.float64,
                        copy=plan.copy_outputs)
    return judge + plan.candidate_b


FOOTPRINTS = {
    # inputs, outputs, parameters, peak temporaries (bytes of a single call)
    "softmax 8192^2": Footprint(268 * 10**6, 268 * 10**6, 0, 268 * 10**6),
    "masked cumsum 32768^2": Footprint(int(5.4 * GB), int(4.3 * GB), 0, int(8.6 * GB)),
    "elementwise 4096x393216": Footprint(int(6.4 * GB), int(6.4 * GB), 0, int(6.4 * GB)),
    "wide MLP": Footprint(8 * 10**6, 8 * 10**6, int(8.6 * GB), 50 * 10**6),
}


@pytest.mark.parametrize("name", FOOTPRINTS)
def test_the_plan_fits_the_usable_memory(name):
    assert total(FOOTPRINTS[name], FREE) <= budget(FREE)


def test_kept_trials_count_their_float64_outputs():
    """A large output: keeping every trial with its float64 outputs does not fit, so trials are
    recomputed per candidate (the float64 reference stays) rather than the plan overrunning the
    device."""
    plan = plan_memory(FOOTPRINTS["masked cumsum 32768^2"], FREE, RUNS, want_float64=True)
    kept = judge_bytes(FOOTPRINTS["masked cumsum 32768^2"], RUNS, cache=True, float64=True,
                       copy=False)
    plain = judge_bytes(FOOTPRINTS["masked cumsum 32768^2"], RUNS, cache=True, float64=False,
                        copy=False)
    assert kept - plain >= RUNS * 2 * int(4.3 * GB)
    assert plan.timing_sets >= 2
    assert plan.float64 and not plan.cache_runs


def test_a_small_task_keeps_every_luxury():
    plan = plan_memory(FOOTPRINTS["softmax 8192^2"], FREE, RUNS, want_float64=True)
    assert plan.cache_runs and plan.float64 and plan.copy_outputs and plan.timing_sets > 100


def test_a_task_beyond_the_device_gets_a_plain_message():
    huge = Footprint(60 * GB, 60 * GB, 0, 60 * GB)
    with pytest.raises(TooLarge, match="use --size small"):
        plan_memory(huge, FREE, RUNS, want_float64=True)


def test_the_message_names_the_free_memory_the_smallest_plan_needs():
    # 12.9 GB in and out, a peak of two outputs: what the 80 GB card refused, with a message
    # that claimed less than the plan needs
    fp = Footprint(int(12.9 * GB), int(12.9 * GB), 0, int(25.8 * GB))
    need = smallest_free_b(fp, RUNS)
    with pytest.raises(TooLarge) as refused:
        plan_memory(fp, need - 1, RUNS, want_float64=True)
    assert f"needs about {need / 1e9:.1f} GB free" in str(refused.value)
    plan = plan_memory(fp, need, RUNS, want_float64=True)  # exactly that much: judged
    assert plan.timing_sets >= 1 and not (plan.float64 or plan.cache_runs or plan.copy_outputs)


def test_a_task_without_a_small_size_is_refused_on_the_cpu_past_what_the_interpreter_runs():
    refuse_unsized_on_cpu(INTERPRETER_CALL_BYTES)  # at the line: run
    with pytest.raises(TooLarge, match=r"sets no small size .* 6\.4 GB of inputs a call"):
        refuse_unsized_on_cpu(int(6.44 * GB))  # KernelBench's 4096 x 393216 fp32 input
