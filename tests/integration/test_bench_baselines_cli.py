"""`kernelwright bench baselines` end to end on the CPU: small sizes, eager only, failures
isolated, a second run skips what is measured."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]

BROKEN = """
import os
import torch
KERNELWRIGHT = {"family": "elementwise"}
class Model(torch.nn.Module):
    def forward(self, x):
        os.abort()
def get_inputs():
    return [torch.randn(4, 4)]
"""


def test_two_tasks_one_crashing(tmp_path):
    suite = tmp_path / "suite" / "level1"
    suite.mkdir(parents=True)
    (suite / "01_softmax.py").write_text(
        (ROOT / "tests" / "fixtures" / "bench" / "tasks" / "softmax_rows.py").read_text()
    )
    (suite / "02_crash.py").write_text(BROKEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    cmd = [
        sys.executable,
        "-m",
        "kernelwright",
        "bench",
        "baselines",
        str(tmp_path / "suite"),
        "--device",
        "cpu",
        "--size",
        "small",
        "--no-compile",
        "--precisions",
        "fp32",
        "--state",
        str(tmp_path / "state"),
        "--out",
        str(tmp_path / "out"),
        "--deadline",
        "120",
        "--commit",
        "abc1234",
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = (tmp_path / "out" / "baselines.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in lines]
    measured = {r["task"]: r for r in records if r["kind"] == "measure"}
    assert measured["01_softmax"]["status"] == "ok"
    assert measured["01_softmax"]["eager_ms"] > 0 and measured["01_softmax"]["compile_ms"] is None
    assert measured["01_softmax"]["bytes"] == 2 * 9 * 100 * 4  # input + output, fp32
    assert measured["02_crash"]["status"] == "error"
    assert "reference" in measured["02_crash"]["error"]
    section = (tmp_path / "out" / "baselines.md").read_text()
    assert "| `01_softmax` |" in section and "## Baselines on " in section
    assert "- **commit**: abc1234" in section
    assert "- **command**: kernelwright bench baselines " in section
    assert "01_softmax" in done.stdout

    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0
    assert "2 item(s) measured by an earlier call: skipped" in again.stderr
