"""The structure stage's numeric checks talk to one interpreter worker (see design_checks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("triton")

HERE = Path(__file__).parent


class Worker:
    """A child running design_checks.main with TRITON_INTERPRET=1."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env["TRITON_INTERPRET"] = "1"
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "design_checks.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the design-check worker died")
        return json.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout:
            self.proc.stdout.close()


@pytest.fixture(scope="session")
def design_worker() -> Iterator[Worker]:
    worker = Worker()
    yield worker
    worker.close()


@pytest.fixture
def check(design_worker: Worker) -> Callable[..., list[str]]:
    """``check(body, skills=..., params=..., inputs=..., dtype=..., tol=..., expect=...)``: every
    ranked design holding ``skills`` is emitted and compared with PyTorch; returns the sources."""

    def run(body: str, **request: Any) -> list[str]:
        reply = design_worker.ask({"body": body, **request})
        if "error" in reply:
            pytest.fail(
                reply["error"] + "\n" + reply.get("traceback", "") + reply.get("source", "")[-3000:]
            )
        return list(reply["sources"])

    return run


@pytest.fixture
def check_launches(design_worker: Worker) -> Callable[..., list[tuple[list[str], list[str]]]]:
    """Like ``check``, returning (skills, kernels launched) per design checked."""

    def run(body: str, **request: Any) -> list[tuple[list[str], list[str]]]:
        reply = design_worker.ask({"body": body, **request})
        if "error" in reply:
            pytest.fail(
                reply["error"] + "\n" + reply.get("traceback", "") + reply.get("source", "")[-3000:]
            )
        return list(zip(reply["checked"], reply["launched"], strict=True))

    return run
