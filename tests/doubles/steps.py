"""A bench step for worker-pool tests: answers by task name, and can die or stall on purpose.

Workers are separate processes, so what the step did is counted in files of ``tally`` (one file
per call), never in memory. Imported by name (``tests`` is on the path), so a spawned worker
can unpickle it.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path

from kernelwright.bench.steps import StepOutcome
from kernelwright.records import Candidate, Status, Task, Verdict


class ScriptedStep:
    """Judges a task ``statuses[name]`` (default ``correct``) after ``delays[name]`` seconds.

    ``deaths[name]``: how many times the worker running that task kills itself (SIGKILL) before
    it answers; ``interrupt``: the task whose step raises KeyboardInterrupt (a Ctrl-C) after its
    delay.
    """

    name = "evaluate"
    needs_solution = True
    archives = False

    def __init__(
        self,
        tally: Path,
        statuses: Mapping[str, str] | None = None,
        delays: Mapping[str, float] | None = None,
        deaths: Mapping[str, int] | None = None,
        interrupt: str = "",
    ) -> None:
        self.tally = Path(tally)
        self.tally.mkdir(parents=True, exist_ok=True)
        self.statuses = dict(statuses or {})
        self.delays = dict(delays or {})
        self.deaths = dict(deaths or {})
        self.interrupt = interrupt
        self.settings: Mapping[str, object] = {}

    def calls(self, task: str = "") -> list[str]:
        """One entry per call so far (``task.pid.n``), of one task or all."""
        return sorted(p.name for p in self.tally.iterdir() if p.name.startswith(task))

    def __call__(
        self, task: Task, start: Candidate | None, options: object, on_progress: object
    ) -> StepOutcome:
        assert start is not None
        before = len(self.calls(task.name + "."))
        (self.tally / f"{task.name}.{os.getpid()}.{before}").touch()
        if before < self.deaths.get(task.name, 0):
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(self.delays.get(task.name, 0.0))
        if task.name == self.interrupt:
            raise KeyboardInterrupt
        status = Status(self.statuses.get(task.name, "correct"))
        correct = status is Status.CORRECT
        verdict = Verdict(status=status, correct=correct, message=f"{status.value} by script")
        return StepOutcome(candidate=start, verdict=verdict)
