"""The harness on a real GPU: CUDA IPC transport, events timing, the CUDA-only guard checks and
the load_inline path. Skipped without a GPU (conftest)."""

from pathlib import Path

import pytest

from kernelwright.evaluate import EvalOptions, evaluate
from kernelwright.records import Status

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "tests" / "fixtures" / "gpu"
OPTS = EvalOptions(device="cuda", size="small", compile_baseline=False, timeout_s=300)


def test_triton_solution_is_correct_and_timed_with_events():
    v = evaluate(ROOT / "examples/softmax/task.py", ROOT / "examples/softmax/solution.py", OPTS)
    assert v.status is Status.CORRECT, v.message
    assert v.timing.representative and "CUDA events" in v.timing.method
    assert v.sol is not None and v.sol.fraction is not None


def test_cuda_extension_solution_is_correct():
    v = evaluate(ROOT / "examples/relu_cuda/task.py", ROOT / "examples/relu_cuda/solution.py", OPTS)
    assert v.status is Status.CORRECT, v.message


def test_side_stream_work_is_rejected():
    v = evaluate(
        ROOT / "examples/softmax/task.py",
        GPU / "softmax_side_stream.py",
        EvalOptions(device="cuda", size="full", compile_baseline=False),
    )
    assert v.status is Status.REJECTED, v.message
    assert "unsynchronised-work" in {x.check for x in v.violations}


def test_joined_side_stream_is_accepted():
    v = evaluate(
        ROOT / "examples/softmax/task.py",
        GPU / "softmax_side_stream_joined.py",
        EvalOptions(device="cuda", size="full", compile_baseline=False),
    )
    assert v.status is Status.CORRECT, f"{v.message} {v.violations}"


def test_extension_result_thrown_away_is_rejected():
    v = evaluate(ROOT / "examples/relu_cuda/task.py", GPU / "relu_cuda_fallback.py", OPTS)
    assert v.status is Status.REJECTED
    fired = {x.check for x in v.violations}
    assert fired & {"kernel-result-used", "framework-delegation"}, fired


def test_cuda_error_is_a_runtime_error_verdict():
    v = evaluate(ROOT / "examples/softmax/task.py", GPU / "softmax_illegal_address.py", OPTS)
    assert v.status is Status.RUNTIME_ERROR, v.message
