"""``--review``: a person accepts or rejects each new best before it is promoted.

The gate wraps the harness (``run_search(..., evaluate_fn=gate)``). When a verdict would
become the run's new best, the :class:`Reviewer` is asked; a rejection turns the verdict into
``rejected`` with a ``human-review`` violation carrying the reviewer's reason, so the archive,
``Archive.best``, the report and the agents' next prompt all see it as the guard's refusal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO, cast

from kernelwright.agents.context import describe_verdict
from kernelwright.archive import Archive
from kernelwright.evaluate.options import EvalOptions
from kernelwright.records import Candidate, Status, Task, Verdict, Violation
from kernelwright.search.proposer import best_correct, candidate_ms

REVIEW_CHECK = "human-review"


@dataclass(frozen=True, slots=True)
class ReviewRequest:
    """What the reviewer sees: the candidate, its verdict and the best it would replace."""

    task_name: str
    source: str
    verdict: Verdict
    previous_best: Verdict | None


@dataclass(frozen=True, slots=True)
class ReviewDecision:
    """Accepted, or rejected with a reason (passed on to the agents)."""

    accepted: bool
    reason: str = ""


class Reviewer(Protocol):
    """Decides whether a new best may be promoted."""

    def review(self, request: ReviewRequest) -> ReviewDecision:
        """Accept or reject ``request``."""
        ...


@dataclass(frozen=True, slots=True)
class AutoReviewer:
    """Always the same answer (tests, unattended runs)."""

    accept: bool = True
    reason: str = "rejected automatically"

    def review(self, request: ReviewRequest) -> ReviewDecision:
        """The fixed decision."""
        return ReviewDecision(self.accept, "" if self.accept else self.reason)


class ConsoleReviewer:
    """Shows the candidate and its verdict, then asks with ``rich.prompt.Confirm``."""

    def __init__(self, console: Any | None = None, stream: TextIO | None = None) -> None:
        from rich.console import Console

        self.console = console or Console(stderr=True)
        # where answers are read from (default: the terminal, whose EOF raises EOFError)
        self.stream = cast(TextIO, _RaiseOnEOF(stream)) if stream is not None else None

    def review(self, request: ReviewRequest) -> ReviewDecision:
        """Ask the person at the terminal."""
        from rich.panel import Panel
        from rich.prompt import Confirm, Prompt
        from rich.syntax import Syntax

        self.console.print(Syntax(request.source, "python", line_numbers=True))
        self.console.print(
            Panel(describe_verdict(request.verdict), title=f"new best for {request.task_name}")
        )
        try:
            if Confirm.ask(
                "Promote this candidate as the new best?", console=self.console, stream=self.stream
            ):
                return ReviewDecision(True)
            reason = Prompt.ask(
                "Why not? (passed to the agents)",
                default="",
                console=self.console,
                stream=self.stream,
            ).strip()
        except EOFError:  # no one to ask: never promote unreviewed
            return ReviewDecision(False, "no answer from the reviewer (input closed)")
        return ReviewDecision(False, reason)


class _RaiseOnEOF:
    """A stream whose end raises EOFError, as ``input()`` does (rich would re-ask forever)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def readline(self) -> str:
        line = self._stream.readline()
        if not line:
            raise EOFError
        return line


class ReviewGate:
    """An ``evaluate_fn`` for :func:`kernelwright.search.run_search` that asks before promoting.

    Args:
        reviewer: who decides.
        archive, run_id: where the decisions are logged, and the run whose best counts
            (read back on the first call, so a resumed run does not re-ask).
        inner: the harness (default :func:`kernelwright.evaluate.harness.evaluate`).
    """

    def __init__(
        self,
        reviewer: Reviewer,
        archive: Archive,
        run_id: str,
        inner: Callable[..., Verdict] | None = None,
    ) -> None:
        self.reviewer = reviewer
        self.archive = archive
        self.run_id = run_id
        self.inner = inner
        self._best: Verdict | None = None
        self._loaded = False

    def __call__(
        self, task: Task, candidate: Candidate, options: EvalOptions, **kwargs: Any
    ) -> Verdict:
        """Evaluate, then ask the reviewer when the verdict is a new best."""
        if self.inner is None:
            from kernelwright.evaluate.harness import evaluate

            self.inner = evaluate
        verdict = self.inner(task, candidate, options, **kwargs)
        if not self._loaded:
            best = best_correct(self.archive.history(task.sha256, self.run_id))
            self._best = best.verdict if best is not None else None
            self._loaded = True
        if not verdict.correct or (
            self._best is not None and candidate_ms(verdict) >= candidate_ms(self._best)
        ):
            return verdict
        decision = self.reviewer.review(
            ReviewRequest(task.name, candidate.source, verdict, self._best)
        )
        self.archive.log_message(
            "review",
            "accepted" if decision.accepted else f"rejected: {decision.reason}",
            run_id=self.run_id,
            candidate_id=self.archive.add_candidate(task, candidate),
            meta={"accepted": decision.accepted, "reason": decision.reason},
        )
        if decision.accepted:
            self._best = verdict
            return verdict
        reason = decision.reason or "a reviewer rejected it"
        return dataclasses.replace(
            verdict,
            status=Status.REJECTED,
            correct=False,
            message=f"rejected by a human reviewer: {reason}",
            violations=(*verdict.violations, Violation(REVIEW_CHECK, reason)),
        )
