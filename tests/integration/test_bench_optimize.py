"""`kernelwright bench --optimize` end to end on the CPU (small sizes, one suite task), and the
sm_90 compile check of emitted kernels, both in child processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.interpreter
# slow: tests/unit/bench/test_bench_cli.py (--optimize drives the optimizer) and
# test_bench_runner.py (the optimize step's results) check the bench side, and
# test_optimize_cli.py runs optimize through the harness
@pytest.mark.slow
def test_bench_optimize_writes_results_and_best_kernels(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    out = tmp_path / "run"
    command = [sys.executable, "-m", "kernelwright", "bench", str(ROOT / "benchmarks")]
    command += ["--optimize", "--only", "17_max_last_axis", "--device", "cpu", "--trials", "1"]
    command += ["--budget-candidates", "2", "--structures", "1", "--out", str(out), "-q"]
    command += ["--archive", str(tmp_path / "a.sqlite")]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["step"] == "optimize" and doc["run"]["not_run"] == []
    (task,) = doc["tasks"]
    assert task["task"] == "17_max_last_axis" and task["correct"], task["message"]
    assert task["candidate_ms"] > 0 and task["eager_ms"] > 0
    assert (out / "17_max_last_axis" / "best.py").exists()
    assert len((out / "journal.jsonl").read_text().splitlines()) == 1


@pytest.mark.sm90
def test_emitted_kernels_compile_for_sm90_without_a_gpu(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    script = textwrap.dedent(
        f"""
        import json
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check
        from kernelwright.task import load_task
        path = {str(ROOT / "tests" / "golden" / "tasks" / "layer_norm.py")!r}
        plan = plan_task(load_task(path, "full"), "cuda", "full", isolate=False)
        reports = []
        for design in plan.designs[:2]:
            reports += compile_check(plan.render(design), path, "full")
        print(json.dumps([[r.kernel, r.ok, r.spill_bytes, r.error[:300]] for r in reports]))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    reports = json.loads(proc.stdout.strip().splitlines()[-1])
    assert reports and all(ok for _, ok, _, _ in reports), reports
    assert all(spill in (0, None) for _, _, spill, _ in reports), reports
