"""One-shot trusted children: run a kernelwright module on a request, read back its result.

For work that runs a task's own code (which never runs in kernelwright's process) but judges no
candidate, such as ``check-task``: ``python -m MODULE WORKDIR`` with ``request.json`` in and
``result.json`` out, in its own session, killed with its group on timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwright.evaluate.spawn import child_env, child_pythonpath, kill_tree, remember_spawn, tail


@dataclass(frozen=True, slots=True)
class ChildResult:
    """What came back: the result dict if the child wrote one, else how it ended."""

    result: dict[str, Any] | None
    returncode: int | None
    timed_out: bool
    stderr_tail: str


def run_child(module: str, request: dict[str, Any], timeout_s: float) -> ChildResult:
    """Run ``python -m module WORKDIR`` to completion or ``timeout_s``."""
    with tempfile.TemporaryDirectory(prefix="kw-child-") as tmp:
        workdir = Path(tmp)
        (workdir / "request.json").write_text(json.dumps(request))
        env = child_env(os.environ, {"PYTHONPATH": child_pythonpath(),
                                      "HOME": os.environ.get("HOME", tmp)})
        with open(workdir / "stderr.log", "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", module, str(workdir)], cwd=tmp, env=env,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        remember_spawn(proc.pid)
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        kill_tree(proc)
        result = None
        try:
            data = json.loads((workdir / "result.json").read_text())
            result = data if isinstance(data, dict) else None
        except (OSError, json.JSONDecodeError):
            pass
        return ChildResult(result, proc.returncode, timed_out, tail(workdir / "stderr.log"))


def read_request(workdir: str) -> dict[str, Any]:
    """The child's request."""
    data: dict[str, Any] = json.loads((Path(workdir) / "request.json").read_text())
    return data


def write_result(workdir: str, result: dict[str, Any]) -> None:
    """Write the child's result atomically."""
    path = Path(workdir) / "result.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, default=str))
    tmp.replace(path)
