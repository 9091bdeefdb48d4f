"""``optimize_task``: turn a task into verified, faster kernels, with no LLM (or with one).

    capture -> lower -> fuse -> skills per group -> ranked designs (stage 1: structure)
      -> run_search(TemplateProposer): evaluate each through the harness, archive it
      -> stage 2: tune the best structure's parameters (the tuning stage's BO, or enumeration)
      -> DIR/best.py, DIR/report.md, DIR/candidates/

A run's id is a function of the task's text and the options that change what is measured
(device, precision, size, proposer), so running the same command again resumes the same run
from the archive: the budget already spent counts, and the proposer skips what was tried.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelwright.archive import Archive
from kernelwright.errors import ConfigError
from kernelwright.records import Candidate, Precision, Task
from kernelwright.search.controller import (
    Budget,
    SearchEvent,
    SearchResult,
    better,
    run_search,
)
from kernelwright.search.proposer import Proposer, Trial


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """``--llm`` and friends: passed to ``kernelwright.agents.make_llm_proposer``."""

    spec: str
    base_url: str | None = None
    constraints: str | None = None
    notes: str | None = None
    review: bool = False


@dataclass(frozen=True, slots=True)
class OptimizeOptions:
    """How to optimize.

    Attributes:
        device: auto, cuda or cpu (Triton's interpreter, small shapes).
        precision: the policy for candidates and baselines.
        size: ``full``/``small``; None follows the device (full on a GPU, small on the CPU).
        trials: correctness trials per candidate.
        timeout_s: per-candidate limit.
        structures: stage-1 designs to evaluate before tuning (None: half the budget, >= 1).
        tuner: ``auto`` (the tuning stage's BO when it imports), ``bo`` or ``neighbours``.
        compile_baseline: time torch.compile too (None: on a GPU only).
        isolate_capture: capture the graph in a child process.
        resume: continue this run id instead of the deterministic one.
        llm: use an LLM proposer (seeded with the templates' best designs) instead.
        seed: evaluation seed (None: fresh per evaluation).
    """

    device: str = "auto"
    precision: Precision = Precision.FP32
    size: str | None = None
    trials: int = 5
    timeout_s: float = 300.0
    structures: int | None = None
    tuner: str = "auto"
    compile_baseline: bool | None = None
    isolate_capture: bool = True
    resume: str | None = None
    llm: LLMConfig | None = None
    seed: int | None = None


@dataclass
class OptimizeResult:
    """What an optimize run produced."""

    task: Task
    run_id: str
    device: str
    size: str
    search: SearchResult | None
    plan: Any  # kernelwright.design.plan.DesignPlan
    out_dir: Path | None = None
    written: list[Path] = field(default_factory=list)

    @property
    def best(self) -> Trial | None:
        """The fastest correct candidate (None: none was correct)."""
        return self.search.best if self.search else None

    @property
    def trials(self) -> list[Trial]:
        """Every evaluated candidate of the run, in order."""
        return self.search.trials if self.search else []


def run_id_for(task: Task, options: OptimizeOptions, device: str, size: str) -> str:
    """The deterministic run id of (task text, device, precision, size, proposer)."""
    proposer = f"llm:{options.llm.spec}" if options.llm else "templates"
    key = json.dumps([task.sha256, device, options.precision.value, size, proposer])
    return f"opt-{task.name}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def optimize_task(
    task: Task | str | Path,
    options: OptimizeOptions,
    budget: Budget,
    out_dir: str | Path | None,
    archive: Archive,
    *,
    on_event: Callable[[SearchEvent], None] | None = None,
    on_phase: Callable[[str], None] | None = None,
    executor: Any | None = None,
    evaluate_fn: Callable[..., Any] | None = None,
) -> OptimizeResult:
    """Optimize one task; see the module docstring.

    Raises:
        TaskError: the task cannot be loaded or captured.
        ConfigError: bad options, or ``llm`` set without the agents package.
    """
    from kernelwright.evaluate.options import EvalOptions

    phase = on_phase or (lambda _msg: None)
    phase("capturing the graph")
    plan = plan_only(task, options, archive)
    task_obj, device, size = plan.task, plan.device, plan.size
    run_id = options.resume or run_id_for(task_obj, options, device, size)
    eval_options = EvalOptions(
        device=device,
        precision=options.precision,
        trials=options.trials,
        timeout_s=options.timeout_s,
        size=size,
        compile_baseline=options.compile_baseline,
        seed=options.seed,
    )
    if not plan.designs and options.llm is None:
        result = OptimizeResult(task_obj, run_id, device, size, None, plan)
        _write(result, out_dir, archive)
        return result
    proposer = _proposer(task_obj, plan, options, budget, archive, run_id)
    judge = evaluate_fn or getattr(proposer, "evaluate_fn", None)
    phase("evaluating candidates")
    try:
        search = run_search(
            task_obj,
            proposer,
            eval_options,
            archive,
            budget,
            run_id,
            executor=executor,
            on_event=on_event,
            evaluate_fn=judge,
            run_config={
                "proposer": proposer.name,
                "device": device,
                "size": size,
                "precision": options.precision.value,
                "structures": len(plan.designs),
            },
        )
    except KeyboardInterrupt:  # write out what is done; the archive lets a rerun resume
        so_far = OptimizeResult(
            task_obj, run_id, device, size, _so_far(task_obj, archive, run_id), plan
        )
        _write(so_far, out_dir, archive)
        raise OptimizeInterrupted(so_far) from None
    result = OptimizeResult(task_obj, run_id, device, size, search, plan)
    _write(result, out_dir, archive)
    return result


class OptimizeInterrupted(KeyboardInterrupt):
    """Ctrl-C during the search. ``result`` holds the candidates evaluated so far, and its
    outputs (best.py, report.md) are written; the same command resumes from the archive."""

    def __init__(self, result: OptimizeResult) -> None:
        super().__init__()
        self.result = result


def _so_far(task: Task, archive: Archive, run_id: str) -> SearchResult:
    """The run's trials as the archive holds them (every verdict is archived as it arrives)."""
    found = SearchResult(run_id, stopped="interrupted")
    for rec in archive.history(task.sha256, run_id):
        trial = Trial(rec.candidate_id, rec.candidate, rec.verdict)
        found.trials.append(trial)
        if better(trial, found.best):
            found.best = trial
    return found


def plan_only(
    task: Task | str | Path, options: OptimizeOptions, archive: Archive | None = None
) -> Any:
    """Stage 1's plan for ``task`` (capture, fusion, skills, ranked designs); nothing is run.

    Raises:
        TaskError: the task cannot be loaded or captured.
    """
    from kernelwright.design.plan import plan_task
    from kernelwright.evaluate.devices import resolve_device
    from kernelwright.task import load_task

    device = resolve_device(options.device)
    size = options.size or ("full" if device == "cuda" else "small")
    task_obj = task if isinstance(task, Task) else load_task(task, size=size)
    if task_obj.size != size:
        task_obj = load_task(task_obj.path, size=size)
    return plan_task(task_obj, device, size, archive=archive, isolate=options.isolate_capture)


def _proposer(
    task: Task, plan: Any, options: OptimizeOptions, budget: Budget, archive: Archive, run_id: str
) -> Proposer:
    from kernelwright.search.strategies import TemplateProposer, make_param_search

    if options.llm is not None:
        return _llm_proposer(task, plan, options, archive, run_id)
    n = budget.candidates if budget.candidates is not None else 12
    structures = options.structures or max(1, min(len(plan.designs), (n + 1) // 2))
    search = make_param_search(
        plan.library,
        prefer=options.tuner if options.tuner != "auto" else "auto",
        prior=plan.warm_start,
        seed=options.seed or 0,
    )
    return TemplateProposer(plan.designs, plan.render, search, structures=structures)


def _llm_proposer(
    task: Task, plan: Any, options: OptimizeOptions, archive: Archive, run_id: str
) -> Proposer:
    llm = options.llm
    assert llm is not None
    try:
        from kernelwright.agents import make_llm_proposer
    except ImportError as exc:
        raise ConfigError(
            f"--llm needs kernelwright.agents.make_llm_proposer, which is not available ({exc}); "
            "install kernelwright[agents] or run without --llm"
        ) from exc
    seeds: list[Candidate] = []
    for d in plan.designs[:3]:
        try:
            seeds.append(
                Candidate(plan.render(d), "template", design=d.to_json(), params=d.params_json())
            )
        except Exception:  # a seed that does not render is simply not shown
            continue
    proposer: Proposer = make_llm_proposer(
        spec=llm.spec,
        base_url=llm.base_url,
        task=task,
        constraints=llm.constraints,
        notes=llm.notes,
        review=llm.review,
        archive=archive,
        run_id=run_id,
        seed_candidates=seeds,
    )
    return proposer


def _write(result: OptimizeResult, out_dir: str | Path | None, archive: Archive) -> None:
    if out_dir is None:
        return
    from kernelwright.design.report import write_outputs

    result.out_dir = Path(out_dir)
    result.written = write_outputs(result, Path(out_dir), archive)


def summarise(result: OptimizeResult) -> dict[str, Any]:
    """A JSON-ready summary (for scripts and ``--json``)."""
    best = result.best
    v = best.verdict if best else None
    t = v.timing if v else None
    return {
        "task": result.task.name,
        "run_id": result.run_id,
        "device": result.device,
        "size": result.size,
        "evaluated": len(result.trials),
        "correct": sum(1 for x in result.trials if x.verdict.correct),
        "best_candidate": best.candidate_id if best else None,
        "best_design": best.candidate.design if best else None,
        "best_ms": t.candidate.median_ms if t and t.candidate else None,
        "speedup_vs_eager": t.speedup_vs_eager if t else None,
        "speedup_vs_compile": t.speedup_vs_compile if t else None,
        "sol_fraction": v.sol.fraction if v and v.sol else None,
        "stopped": result.search.stopped if result.search else "no template applies",
        "left_to_framework": [g["ops"] for g in result.plan.framework_groups()],
    }


__all__: Sequence[str] = [
    "LLMConfig",
    "OptimizeInterrupted",
    "OptimizeOptions",
    "OptimizeResult",
    "optimize_task",
    "plan_only",
    "run_id_for",
    "summarise",
]
