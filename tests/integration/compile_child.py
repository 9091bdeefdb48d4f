"""Run a compile-check script in a child process with Triton's interpreter off.

``compile_check`` compiles for sm_90 ahead of time; the test session may run with
TRITON_INTERPRET=1 (which Triton reads at import), so the script runs in a fresh interpreter
with ``src`` on the path and prints its result as JSON on its last line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# the imports of a script that plans tasks and compiles their designs under a policy (indented
# as the scripts written inside a test are, which run_compile_script dedents)
PLAN_IMPORTS = """
        import json, re
        from kernelwright.design.plan import plan_task
        from kernelwright.design.compile_check import compile_check, global_loads, global_stores
        from kernelwright.evaluate.precision import apply_policy
        from kernelwright.records import Precision
        from kernelwright.task import load_task

        def bf16_plans(paths):
            \"\"\"(path, plan) of each task at full size under the bf16 policy.\"\"\"
            apply_policy(Precision("bf16"))
            for path in paths:
                yield path, plan_task(load_task(path, "full"), "cuda", "full", isolate=False,
                                      precision="bf16")
"""


def run_compile_script(script: str, timeout: float = 900) -> Any:
    """The JSON the script printed last (the test fails with the child's stderr otherwise)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
