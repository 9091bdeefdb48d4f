"""Shared by the integration tests: one evaluation session per task, reused across tests.

Starting a judge (the reference, the baselines) costs seconds; tests that judge many candidates
of one task share a session, which lives until a test asks for another task (tests are
parametrized in task order) or the test run ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.harness import EvalSession


@pytest.fixture(scope="session")
def session_for() -> Iterator[Callable[[Path, EvalOptions], EvalSession]]:
    """``session_for(task_path, options)``: the open session for that task and options."""
    current: dict[str, object] = {}

    def get(task: Path, options: EvalOptions) -> EvalSession:
        key = (str(task), options)
        if current.get("key") != key:
            old = current.get("session")
            if isinstance(old, EvalSession):
                old.close()
            current["key"] = key
            current["session"] = EvalSession(task, options)
        session = current["session"]
        assert isinstance(session, EvalSession)
        return session

    yield get
    last = current.get("session")
    if isinstance(last, EvalSession):
        last.close()
