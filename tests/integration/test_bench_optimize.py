"""scripts/gpu_optimize_suite.py on the CPU (small sizes, one task) and the sm_90 compile check of
emitted kernels, both in child processes."""

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
@pytest.mark.slow
def test_suite_script_runs_a_task_and_writes_json(tmp_path: Path) -> None:
    env = {**os.environ, "OUT": str(tmp_path), "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "gpu_optimize_suite.py"),
            "--device",
            "cpu",
            "--size",
            "small",
            "--only",
            "17_max_last_axis",
            "--budget",
            "1",
            "--trials",
            "1",
            "--deadline",
            "240",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = [
        json.loads(line) for line in (tmp_path / "optimize_suite.jsonl").read_text().splitlines()
    ]
    assert [r["task"] for r in rows] == ["17_max_last_axis"] and rows[0]["status"] == "ok"
    summary = json.loads((tmp_path / "optimize_suite_summary.json").read_text())["summary"]
    assert summary["correct"] == 1 and "geomean_vs_eager_correct" in summary
    assert (tmp_path / "optimize" / "17_max_last_axis" / "best.py").exists()


@pytest.mark.slow
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
