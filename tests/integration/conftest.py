"""Shared by the integration tests: one evaluation session per task, reused across tests.

Starting a judge (the reference, the baselines) costs seconds; tests that judge many candidates
of one task share a session, which lives until a test asks for another task or the test run
ends. Tests are parametrized in task order, and the tests of a module that use the session run
grouped by task (``pytest_collection_modifyitems``), so each task's session starts once per
module, not once per test function.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.executor import SubprocessExecutor
from kernelwright.evaluate.harness import EvalSession


def _session_task(item: pytest.Item) -> str | None:
    """The task a test judges through ``session_for`` (its ``solution`` is ``<task>__<name>``)."""
    if "session_for" not in getattr(item, "fixturenames", ()):
        return None
    callspec = getattr(item, "callspec", None)
    solution = callspec.params.get("solution") if callspec is not None else None
    return solution.split("__")[0] if isinstance(solution, str) else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Within each module, the tests that name a task move next to the other tests of that task
    # (first appearance first, collection order within a task); every other test keeps its place.
    slots: dict[object, list[int]] = {}
    for i, item in enumerate(items):
        if _session_task(item) is not None:
            slots.setdefault(item.module, []).append(i)
    for positions in slots.values():
        tests = [items[i] for i in positions]
        first: dict[str | None, int] = {}
        for n, item in enumerate(tests):
            first.setdefault(_session_task(item), n)
        tests.sort(key=lambda item: first[_session_task(item)])  # stable: keeps the order within
        for i, item in zip(positions, tests, strict=True):
            items[i] = item


@pytest.fixture(scope="session")
def session_for(
    shared_executor: SubprocessExecutor,
) -> Iterator[Callable[[Path, EvalOptions], EvalSession]]:
    """``session_for(task_path, options)``: the open session for that task and options.

    The sessions share one executor (``shared_executor``), so the candidate process pre-started
    after the last candidate of one task serves the first candidate of the task that follows
    instead of being thrown away (a process is a few seconds of CPU: it imports torch and
    Triton)."""
    current: dict[str, object] = {}
    executor = shared_executor

    def get(task: Path, options: EvalOptions) -> EvalSession:
        key = (str(task), options)
        if current.get("key") != key:
            old = current.get("session")
            if isinstance(old, EvalSession):
                old.close()
            current["key"] = key
            current["session"] = EvalSession(task, options, executor=executor)
        session = current["session"]
        assert isinstance(session, EvalSession)
        return session

    yield get
    last = current.get("session")
    if isinstance(last, EvalSession):
        last.close()


@pytest.fixture
def capture_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``kernelwright optimize`` run by the test captures the task's graph in the test's own
    process, which has imported torch already: a child imports torch and torch.export again,
    seconds of CPU. For tests whose property is not where the graph is captured (the child's
    capture is run end to end by test_optimize_cli.py and test_optimize_session.py)."""
    optimize = importlib.import_module("kernelwright.optimize")
    options = functools.partial(optimize.OptimizeOptions, isolate_capture=False)
    monkeypatch.setattr(optimize, "OptimizeOptions", options)
