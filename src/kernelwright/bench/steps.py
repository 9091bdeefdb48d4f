"""The per-task step of a bench run: what turns one task (and its solution) into a verdict.

    evaluate   judge SOLS/<id>.py through the harness (``kernelwright bench``)
    optimize   run ``kernelwright.optimize.optimize_task`` on the task and report its best
               candidate's verdict (``kernelwright bench --optimize``)

The runner does not know which step it drives: a step is any object with the attributes of
:class:`TaskStep` and ``__call__(task, start, options, on_progress) -> StepOutcome``. Tests pass
an :class:`EvaluateStep` around a fake ``evaluate_fn`` to count evaluations.
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from kernelwright.errors import ConfigError, KernelwrightError
from kernelwright.evaluate.options import EvalOptions
from kernelwright.records import Candidate, Task, TimingStats, Verdict

ProgressFn = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """The candidate a step settled on and the harness's verdict on it."""

    candidate: Candidate
    verdict: Verdict


class TaskStep(Protocol):
    """Turns a task into a judged candidate."""

    @property
    def name(self) -> str:
        """Recorded in the options fingerprint: results of different steps never mix."""
        ...

    @property
    def needs_solution(self) -> bool:
        """True when a task without a solution file is a failure without running the step."""
        ...

    @property
    def settings(self) -> Mapping[str, Any]:
        """What else changes its results (a budget...): part of the resume key."""
        ...

    @property
    def archives(self) -> bool:
        """True when the step records its candidates in the archive itself."""
        ...

    def __call__(
        self, task: Task, start: Candidate | None, options: EvalOptions, on_progress: ProgressFn
    ) -> StepOutcome:
        """Run the step; bad input raises a KernelwrightError, a bad candidate is a verdict."""
        ...


class EvaluateFn(Protocol):
    """The harness's signature (:func:`kernelwright.evaluate.evaluate`), as the step calls it."""

    def __call__(
        self,
        task: Task,
        solution: Candidate,
        options: EvalOptions | None = None,
        *,
        on_progress: ProgressFn | None = None,
    ) -> Verdict:
        """Judge ``solution`` for ``task``."""
        ...


class EvaluateStep:
    """Judge the paired solution file through the harness (the default step)."""

    name = "evaluate"
    needs_solution = True
    archives = False

    def __init__(self, evaluate_fn: EvaluateFn | None = None) -> None:
        self.evaluate_fn = evaluate_fn
        self.settings: Mapping[str, Any] = {}

    def __call__(
        self, task: Task, start: Candidate | None, options: EvalOptions, on_progress: ProgressFn
    ) -> StepOutcome:
        """See :class:`TaskStep`."""
        if start is None:
            raise ValueError("EvaluateStep needs a solution; the runner checks this first")
        fn = self.evaluate_fn
        if fn is None:
            from kernelwright.evaluate.harness import evaluate

            fn = evaluate
        verdict = fn(task, start, options, on_progress=on_progress)
        return StepOutcome(candidate=start, verdict=verdict)


class OptimizeStep:
    """Optimize each task with :func:`kernelwright.optimize.optimize_task`; report its best.

    The optimizer owns its search (proposers, tuning, its own resumable run in the archive); the
    bench reports the verdict of its best correct candidate, measured during the search under
    the bench's device, precision and size. No correct candidate: the last one evaluated is
    reported (a failure with its reason); none evaluated at all is an error result.

    Args:
        archive: where the optimizer records its runs (required by it; ``":memory:"`` works).
        budget_candidates, budget_minutes: the optimizer's budget per task.
        out_dir: ``out_dir/<task id>/`` gets each task's ``best.py``, ``report.md`` and
            candidates (None: nothing written).
        structures, tuner, search: passed on (see ``kernelwright optimize --help``).
        workers, scheduler: each task's candidates judged on this many worker processes, or
            on a Dask cluster (``optimize --workers``, ``--scheduler``); not part of the
            resume key, since verdicts do not depend on where they were judged.
        optimize_fn: stands in for ``optimize_task`` (tests).
    """

    name = "optimize"
    needs_solution = False
    archives = True  # the optimizer records every candidate itself

    def __init__(
        self,
        archive: Any,
        *,
        budget_candidates: int | None = 8,
        budget_minutes: float | None = None,
        out_dir: str | Path | None = None,
        structures: int | None = None,
        tuner: str = "auto",
        search: str = "staged",
        workers: int = 1,
        scheduler: str | None = None,
        optimize_fn: Callable[..., Any] | None = None,
    ) -> None:
        self.archive = archive
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.budget_candidates = budget_candidates
        self.budget_minutes = budget_minutes
        self.structures = structures
        self.tuner = tuner
        self.search = search
        self.workers = workers
        self.scheduler = scheduler
        from kernelwright.design.fingerprint import generator_fingerprint

        self.settings: Mapping[str, Any] = {
            "budget_candidates": budget_candidates,
            "budget_minutes": budget_minutes,
            "structures": structures,
            "tuner": tuner,
            # a staged bench keeps the fingerprint it always had, so its journal resumes
            **({"search": search} if search != "staged" else {}),
            # a changed template or skill proposes other kernels: its results are not reused
            "generator": generator_fingerprint(),
        }
        self._fn = optimize_fn or load_optimize_task()

    def __call__(
        self, task: Task, start: Candidate | None, options: EvalOptions, on_progress: ProgressFn
    ) -> StepOutcome:
        """See :class:`TaskStep`."""
        from kernelwright.constraints import Constraints
        from kernelwright.optimize import OptimizeOptions
        from kernelwright.search.controller import Budget

        rules = options.constraints if isinstance(options.constraints, Constraints) else None
        opt = OptimizeOptions(evaluation=options, constraints=rules, structures=self.structures,
                              tuner=self.tuner, search=self.search, workers=self.workers,
                              scheduler=self.scheduler)
        budget = Budget(candidates=self.budget_candidates, minutes=self.budget_minutes)

        def on_event(event: Any) -> None:
            if getattr(event, "kind", "") == "evaluated" and event.trial is not None:
                on_progress(f"optimize: candidate {event.n_evaluated} {event.trial.verdict.status}")

        result = self._fn(
            task,
            opt,
            budget,
            self.out_dir / task.name if self.out_dir is not None else None,
            self.archive,
            on_event=on_event,
            on_phase=lambda text: on_progress(f"optimize: {text}"),
        )
        return outcome_from(result)


def attempt_step(
    step: TaskStep,
    task: Task,
    start: Candidate | None,
    options: EvalOptions,
    on_progress: ProgressFn,
) -> StepOutcome | str:
    """Run the step: its outcome, or the error text of a task that could not be judged.

    Raises:
        ConfigError: the same for every task (stop the run, and say why).
    """
    try:
        return step(task, start, options, on_progress)
    except ConfigError:
        raise
    except KernelwrightError as exc:  # the task's reference failed, a file vanished...
        return f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a bug must not cost the rest of a long run; keep its trace
        trace = traceback.format_exc(limit=6)
        return f"internal error {type(exc).__name__}: {exc}\n{trace}"


def load_optimize_task() -> Callable[..., Any]:
    """``kernelwright.optimize.optimize_task``, or a ConfigError saying it is not there."""
    try:
        module: Any = importlib.import_module("kernelwright.optimize")
    except ModuleNotFoundError as exc:
        if exc.name != "kernelwright.optimize":
            raise
        module = None
    fn = getattr(module, "optimize_task", None)
    if fn is None or not callable(fn):
        raise ConfigError(
            "--optimize needs kernelwright.optimize.optimize_task, which this installation "
            "does not provide; run `kernelwright bench` without --optimize"
        )
    return fn  # type: ignore[no-any-return]


def outcome_from(result: Any) -> StepOutcome:
    """The (candidate, verdict) to report from an optimize result.

    Accepts a :class:`StepOutcome`, or an ``OptimizeResult``-like object: its ``best`` trial
    when there is one, else the last trial it evaluated.

    Raises:
        EvalError: the optimizer evaluated no candidate at all (no template applies, say).
    """
    if isinstance(result, StepOutcome):
        return result
    if getattr(result, "eager_is_better", False):
        return eager_outcome(result)
    trial = getattr(result, "best", None)
    if trial is None:
        trials = list(getattr(result, "trials", []) or [])
        trial = trials[-1] if trials else None
    if trial is None:
        from kernelwright.errors import EvalError

        search = getattr(result, "search", None)
        why = getattr(search, "stopped", "") or "no template applies"
        raise EvalError(f"the optimizer evaluated no candidate ({why})")
    return StepOutcome(candidate=trial.candidate, verdict=trial.verdict)


def spread_note(candidate: TimingStats | None, eager: TimingStats | None) -> str:
    """", within the timing spread" where the two medians lie within each other's batches'
    interquartile ranges (each taken about its median): the order between them is the clock's
    run-to-run spread, not a difference a user can count on. Empty otherwise."""
    if candidate is None or eager is None:
        return ""
    gap = abs(candidate.median_ms - eager.median_ms)
    return ", within the timing spread" if gap <= (candidate.iqr_ms + eager.iqr_ms) / 2 else ""


def eager_outcome(result: Any) -> StepOutcome:
    """What a run returns when eager PyTorch beat its fastest correct candidate: the task's own
    model, with eager's timing as the harness measured it in that run (same device, policy and
    clock), so the task counts at 1.00x eager, never below."""
    import dataclasses

    from kernelwright.design.report import eager_model_source
    from kernelwright.records import Candidate

    best = result.best
    v = best.verdict
    t = v.timing
    eager = t.eager
    vs_compile = (
        t.compile.median_ms / eager.median_ms
        if t.compile is not None and eager is not None and eager.median_ms > 0
        else None
    )
    timing = dataclasses.replace(
        t, candidate=eager, speedup_vs_eager=1.0, speedup_vs_compile=vs_compile
    )
    sol = v.sol
    if sol is not None and eager is not None and eager.median_ms > 0:
        sol = dataclasses.replace(sol, fraction=sol.floor_ms / eager.median_ms)
    candidate = Candidate(eager_model_source(result.task), "eager")
    # the returned model is the reference itself: no error against it; what the judge said of
    # the candidate (its errors' labels, host-bound calls...) stays, marked as the candidate's
    verdict = dataclasses.replace(
        v,
        timing=timing,
        sol=sol,
        max_abs_err=0.0,
        max_rel_err=0.0,
        norm_err=0.0,
        solution_sha256=candidate.sha256,
        message=f"eager PyTorch: faster than the best candidate ({best.candidate_id}, "
        f"{t.speedup_vs_eager:.2f}x eager{spread_note(t.candidate, eager)})",
        labels=(
            "eager fallback: the task's own model is returned",
            *(f"the best candidate's verdict: {label}" for label in v.labels),
        ),
    )
    return StepOutcome(candidate=candidate, verdict=verdict)
