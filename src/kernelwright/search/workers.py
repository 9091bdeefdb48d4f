"""Judging a search's candidates on several workers at once.

    controller --(StepJob: one candidate)--> LocalPool (one process per worker, pinned to a
               <--(Finished: its verdict)--   GPU of its own on a GPU host)

Each worker keeps one :class:`~kernelwright.evaluate.harness.EvalSession` per task and options
for as long as it lives (a judge, the reference computed once, a fresh confined process per
candidate), so after its first candidate a worker pays only for candidates. The controller
stays the only writer of the archive; workers only judge. A worker that dies is restarted and
its candidate judged once more, then recorded as a runtime error: no finished verdict is lost.
"""

from __future__ import annotations

import atexit
from collections.abc import Mapping
from typing import Any

from kernelwright.bench.steps import StepOutcome
from kernelwright.evaluate.options import EvalOptions
from kernelwright.records import Candidate, Task

# This worker process's sessions, by (task text, size, options): a judge each.
_SESSIONS: dict[tuple[str, str, str], Any] = {}


class JudgeCandidate:
    """A bench ``TaskStep`` that judges the candidate it is given (``start``) in the worker's
    own session for the task."""

    name = "judge-candidate"
    needs_solution = True
    archives = False
    settings: Mapping[str, Any] = {}

    def __call__(
        self, task: Task, start: Candidate | None, options: EvalOptions, on_progress: Any
    ) -> StepOutcome:
        if start is None:
            raise ValueError("a search's worker needs a candidate to judge")
        return StepOutcome(candidate=start, verdict=_session(task, options).evaluate(start))


def _session(task: Task, options: EvalOptions) -> Any:
    from kernelwright.evaluate.harness import EvalSession

    key = (task.sha256, task.size, repr(options))
    session = _SESSIONS.get(key)
    if session is None:
        if not _SESSIONS:
            atexit.register(close_sessions)
        session = _SESSIONS[key] = EvalSession(task, options)
    return session


def close_sessions() -> None:
    """End this worker's judges (their processes and temporary folders)."""
    while _SESSIONS:
        _, session = _SESSIONS.popitem()
        try:
            session.close()
        except Exception:  # a judge already gone: nothing left to end
            continue
