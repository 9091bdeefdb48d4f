"""The harness on a real GPU: CUDA IPC of the candidate's memory, the judge's clock, the
confined process, and the CUDA-only attacks. Skipped without a GPU (conftest)."""

from pathlib import Path

import pytest

from kernelwright.errors import EvalError
from kernelwright.evaluate import EvalOptions, evaluate
from kernelwright.evaluate.harness import EvalSession
from kernelwright.records import Candidate, Precision, Status

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "tests" / "fixtures" / "gpu"
OPTS = EvalOptions(device="cuda", size="small", compile_baseline=False, timeout_s=300)
FULL = EvalOptions(device="cuda", size="full", compile_baseline=False, timeout_s=300)


def test_triton_solution_is_correct_and_timed_by_the_judge():
    v = evaluate(ROOT / "examples/softmax/task.py", ROOT / "examples/softmax/solution.py", OPTS)
    assert v.status is Status.CORRECT, v.message
    assert v.timing.representative and "judge's clock" in v.timing.method
    assert v.sol is not None and v.sol.fraction is not None
    gaps = [label for label in v.labels if label.startswith("containment")]
    # On a GPU the process keeps the host's PID namespace (CUDA IPC across them is not relied on)
    assert all("PID namespace" in gap for gap in gaps), gaps


def test_cuda_extension_solution_is_correct():
    v = evaluate(ROOT / "examples/relu_cuda/task.py", ROOT / "examples/relu_cuda/solution.py", OPTS)
    assert v.status is Status.CORRECT, v.message


def test_side_stream_work_is_counted_by_the_judges_clock():
    """Twenty launches hidden on a side stream: accepted (the output is right), but the judge's
    clock, which ends when the process's device is idle, counts all of them."""
    task = ROOT / "examples/softmax/task.py"
    with EvalSession(task, FULL) as session:
        honest = session.evaluate(Candidate((ROOT / "examples/softmax/solution.py").read_text()))
        hidden = session.evaluate(Candidate((GPU / "softmax_side_stream.py").read_text()))
    assert honest.status is Status.CORRECT and hidden.status is Status.CORRECT, hidden.message
    assert hidden.timing.candidate.median_ms > 5 * honest.timing.candidate.median_ms


def test_joined_side_stream_is_accepted():
    v = evaluate(ROOT / "examples/softmax/task.py", GPU / "softmax_side_stream_joined.py", FULL)
    assert v.status is Status.CORRECT, f"{v.message} {v.violations}"


def test_extension_result_thrown_away_is_rejected():
    v = evaluate(ROOT / "examples/relu_cuda/task.py", GPU / "relu_cuda_fallback.py", OPTS)
    assert v.status is Status.REJECTED
    fired = {x.check for x in v.violations}
    assert fired & {"kernel-result-used", "framework-delegation"}, fired


def test_cuda_error_is_a_runtime_error_verdict():
    v = evaluate(ROOT / "examples/softmax/task.py", GPU / "softmax_illegal_address.py", OPTS)
    assert v.status is Status.RUNTIME_ERROR, v.message


def test_a_task_near_the_devices_memory_is_judged():
    """A 12.9 GB input and output (KernelBench's own size class): on a device with room for the
    smallest plan (about 100 GB free: the judge's call and the reference's peak of two outputs,
    the candidate's call) the memory plan keeps both processes within it and the honest
    solution is judged; on a smaller one the task is refused up front with a plain message,
    never an out-of-memory failure halfway."""
    import torch

    free, _ = torch.cuda.mem_get_info()
    if free >= 110 * 10**9:
        v = evaluate(GPU / "big_relu_task.py", GPU / "big_relu_solution.py", FULL)
        assert v.status is Status.CORRECT, v.message
        assert v.timing.candidate is not None
    else:
        with pytest.raises(EvalError, match="too large for this device: .* use --size small"):
            evaluate(GPU / "big_relu_task.py", GPU / "big_relu_solution.py", FULL)


@pytest.mark.parametrize(("task", "solution", "precision"), [
    # 0.2 ms cuBLAS products, batches of some 200 calls
    (ROOT / "kernelbench/level1/1_Square_matrix_multiplication_.py",
     GPU / "square_matmul_eager.py", Precision.BF16),
    # 0.7 ms calls with 1 GB outputs, each mapped by the judge in the batches it reads
    (GPU / "gigabyte_relu_task.py", GPU / "relu_eager.py", Precision.FP32),
], ids=["bf16-product", "gigabyte-outputs"])
def test_the_judge_never_reads_a_device_bound_call_faster_than_its_own_events(
        task: Path, solution: Path, precision: Precision):
    """The fixed cost subtracted from a batch is calibrated so that it never exceeds what the
    batch spent beyond its calls: the judge's time stays at or above the process's own events
    (within the spread of both). The solution is the task's own PyTorch call, so the guard,
    which refuses that, is off (as for ``kernelwright eval --reference``)."""
    opts = EvalOptions(device="cuda", size="full", precision=precision, trials=2,
                       baselines=False, timeout_s=300, guard=False)
    v = evaluate(task, solution, opts)
    assert v.status is Status.CORRECT, v.message
    breakdown = v.timing.candidate_breakdown
    assert breakdown is not None and breakdown.events_ms is not None
    events = breakdown.events_ms
    assert v.timing.candidate is not None
    assert v.timing.candidate.median_ms >= 0.95 * events, breakdown
