"""``optimize_task``: turn a task into verified, faster kernels, with no LLM (or with one).

    capture -> lower -> fuse -> skills per group -> ranked designs (stage 1: structure)
      -> run_search(proposer): evaluate each through the harness, archive it
      -> DIR/best.py, DIR/report.md, DIR/candidates/

The search's session (one judge) begins while the capture runs in its child process, so the
judge computes the reference meanwhile (``_plan_beside_judge``).

The proposer is the search mode (``OptimizeOptions.search``):

    staged      the ranked structures, then a tuning strategy over the best one's parameters
                (neighbours-then-bo by default): ``search.templates``
    mcts        a tree of design decisions searched by PUCT: ``search.mcts``
    evolution   a population of designs, one-decision mutations, crossover: ``search.evolution``

In every mode, proposals that render to the same kernel at the task's shapes as an evaluated
candidate reuse its verdict instead of an evaluation (``DesignPlan.candidate_key``).

With an LLM (``OptimizeOptions.llm``), the templates (in the chosen mode), the LLM and the
constant tuner (``search.constants``: one-constant moves of the best free-form candidate) take
turns in one search (``search.joint``): one budget, one history, one pruning, and each builds on
the others' candidates. ``llm.only`` leaves the LLM alone.

Options are one ``EvalOptions`` (how every candidate is judged) plus what only a search has.
A constraints file binds every proposer: its precision must be the run's policy (checked before
anything runs), its budget caps the run's, and every proposal's source is screened before it
costs an evaluation (``search.controller``).

A run's id is a function of the task's text, the options that change what is measured
(device, precision, size, proposer, constraints) and the code of the harness and of the kernel
generator, so running the same command again resumes the same run from the archive: the budget
already spent counts, and the proposer skips what was tried.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwright.archive import Archive
from kernelwright.constraints import Constraints
from kernelwright.errors import ConfigError
from kernelwright.evaluate.fingerprint import harness_fingerprint
from kernelwright.evaluate.options import EvalOptions
from kernelwright.hardware.energy import Objective, unavailable_reason
from kernelwright.records import Candidate, Precision, Task
from kernelwright.search.controller import (
    Budget,
    SearchEvent,
    SearchResult,
    run_search,
)
from kernelwright.search.proposer import (
    Proposer,
    Trial,
    best_correct,
    candidate_cost,
    eager_cost,
)
from kernelwright.search.spill_screen import SpillScreen
from kernelwright.skills import plan_hints
from kernelwright.tuning.strategies.base import Strategy

if TYPE_CHECKING:
    from kernelwright.design.graph import OpGraph
    from kernelwright.evaluate.harness import EvalSession

# The values of ``--search``: how the designs are searched (see the module docstring).
SEARCH_MODES = ("staged", "mcts", "evolution")


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """``--llm`` and friends: passed to ``kernelwright.agents.make_llm_proposer``.

    ``only``: the LLM proposes alone (to evaluate an agent by itself); otherwise it joins the
    templates and the constant tuner in one search.
    """

    spec: str
    base_url: str | None = None
    notes: str | None = None
    review: bool = False
    only: bool = False


@dataclass(frozen=True, slots=True)
class OptimizeOptions:
    """How to optimize.

    Attributes:
        evaluation: how every candidate is judged (device, precision, size, trials, timeout,
            baselines, seed...); ``size="auto"`` is full on a GPU and small on the CPU. Its
            seed also seeds the proposers (None: 0 for them, fresh inputs per evaluation).
        constraints: what candidates may be, enforced for every proposer (None: anything).
        structures: stage-1 designs to evaluate before tuning (None: half the budget, >= 1).
        tuner: the stage-2 tuning strategy: a name from ``kernelwright tune strategies``, or
            ``auto`` (``neighbours-then-bo`` when SciPy imports, else ``neighbours``).
        isolate_capture: capture the graph in a child process.
        resume: continue this run id instead of the deterministic one.
        llm: an LLM proposer (seeded with the templates' best designs) in the same search as
            the templates and the constant tuner, taking turns on one budget
            (``search.joint``); with ``llm.only``, the LLM alone.
        search: how the templates' designs are searched: one of :data:`SEARCH_MODES`.
        diagnoses: what a hardware profile of a kernel to improve shows (``kernelwright
            diagnose`` lines): listed in the report and, with an LLM, in its planner's notes.
        diagnosed: the kinds of those diagnoses (``memory-bound``, ``tail``...): skills that
            relieve one rank higher (``Skill.relieves``, ``design.plan.RELIEF``).
        confirm: after the search, evaluate the best candidate once more and report that
            evaluation's time (the best was chosen as the least of many noisy times, so its
            own is biased low); on a GPU, in this process's session (not with ``workers`` or
            ``scheduler``). A best that fails its second evaluation is not returned.
        profile_best: after the search, profile the best candidate with Nsight Compute (a
            template candidate, on a GPU; ``hardware.profile``): its export beside the report,
            its diagnoses in the report and the summary.
        workers: candidates judged at once, each worker a process with a judge of its own
            (one GPU each on a GPU host, ``search.workers``); 1 judges in this process's
            session.
        scheduler: judge the candidates on a Dask cluster instead: its scheduler's address,
            or ``local`` for ``workers`` processes of this host (``bench.dask_pool``).
        screen_spills: on a GPU, compile each of the templates' tuning moves for it before
            it is judged, and archive one whose kernels spill registers where its structure's
            best candidate's do not instead of evaluating it (``search.spill_screen``).

    Raises:
        ConfigError: the constraints require another precision than ``evaluation``'s,
            ``evaluation`` carries other constraints, or ``search`` is not a known mode or
            is given with an LLM that proposes alone.
    """

    evaluation: EvalOptions = field(default_factory=EvalOptions)
    constraints: Constraints | None = None
    structures: int | None = None
    tuner: str = "auto"
    isolate_capture: bool = True
    resume: str | None = None
    llm: LLMConfig | None = None
    search: str = "staged"
    workers: int = 1
    scheduler: str | None = None
    diagnoses: tuple[str, ...] = ()
    diagnosed: tuple[str, ...] = ()
    confirm: bool = True
    profile_best: bool = False
    screen_spills: bool = True

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {self.workers}")
        if self.search not in SEARCH_MODES:
            raise ConfigError(f"--search {self.search!r} is not one of {', '.join(SEARCH_MODES)}")
        if self.llm is not None and self.llm.only and self.search != "staged":
            raise ConfigError(
                f"--search {self.search} searches the templates' designs, and with --llm-only "
                "the LLM proposes alone; drop one of them"
            )
        if self.constraints is None:
            return
        if self.evaluation.constraints not in (None, self.constraints):
            raise ConfigError(
                "constraints given twice (OptimizeOptions.constraints and "
                "EvalOptions.constraints); give them once, as OptimizeOptions.constraints"
            )
        self.constraints.check_precision(self.evaluation.precision)


@dataclass
class OptimizeResult:
    """What an optimize run produced."""

    task: Task
    run_id: str
    device: str
    size: str
    precision: Precision  # the policy of every timing and speed-up in it
    search: SearchResult | None
    plan: Any  # kernelwright.design.plan.DesignPlan
    objective: Objective = Objective.TIME  # what ranked the candidates
    diagnoses: tuple[str, ...] = ()  # of a profile the person gave (``OptimizeOptions``)
    constraints: Constraints | None = None  # enforced for every proposer
    best_profile: tuple[str, ...] = ()  # diagnoses of the best candidate (``profile_best``)
    # designs the proposers could not turn into a candidate: (design, why), in the order met
    unrendered: list[tuple[str, str]] = field(default_factory=list)
    out_dir: Path | None = None
    written: list[Path] = field(default_factory=list)

    @property
    def best(self) -> Trial | None:
        """The fastest correct candidate, with its second evaluation's verdict where the run
        confirmed it (None: none was correct, or the best failed its confirmation)."""
        if self.search is None:
            return None
        confirmed = self.search.confirmed
        if confirmed is not None:
            return confirmed if confirmed.verdict.correct else None
        return self.search.best

    @property
    def chosen(self) -> Trial | None:
        """The candidate the search chose, with the verdict it was chosen on."""
        return self.search.best if self.search else None

    @property
    def trials(self) -> list[Trial]:
        """Every candidate of the run in order (evaluated, or refused by the constraints)."""
        return self.search.trials if self.search else []

    @property
    def eager_is_better(self) -> bool:
        """Eager PyTorch beat the best correct candidate under the run's objective (time,
        energy or their product) on representative measurements (a GPU's): the run then
        returns the task's own model, never a kernel that would cost the user more. On the CPU,
        timings under Triton's interpreter decide nothing."""
        best = self.best
        if best is None or not best.verdict.timing.representative:
            return False
        ours = candidate_cost(best.verdict, self.objective)
        eager = eager_cost(best.verdict, self.objective)
        return math.isfinite(ours) and math.isfinite(eager) and eager < ours


def _spill_screen(task: Task, judged: EvalOptions, options: OptimizeOptions) -> SpillScreen | None:
    """The screen of the templates' tuning moves on this run's GPU (None: a CPU run, an LLM
    proposing alone, or ``screen_spills`` off)."""
    if (not options.screen_spills or judged.device != "cuda"
            or (options.llm is not None and options.llm.only)):
        return None
    import torch

    major, minor = torch.cuda.get_device_capability()
    return SpillScreen.for_gpu(task, judged.size, judged.precision, 10 * major + minor)


def run_id_for(task: Task, options: OptimizeOptions, device: str, size: str) -> str:
    """The deterministic run id of (task text, device, precision, size, proposer, constraints,
    objective, the harness's code, the generator's code): running the same optimize again
    resumes the run, unless the harness changed since, whose verdicts would then be another
    judge's, or the generator did, whose designs may now render other kernels."""
    llm = options.llm
    if llm is not None and llm.only:
        proposer = f"llm:{llm.spec}"
    else:
        proposer = f"templates+llm:{llm.spec}" if llm is not None else "templates"
        if options.search != "staged":
            proposer += f":{options.search}"  # a staged run's id does not name its mode
    parts = [task.sha256, device, options.evaluation.precision.value, size, proposer,
             harness_fingerprint()]
    if not (llm is not None and llm.only):  # the templates' candidates: the generator's code
        from kernelwright.design.fingerprint import generator_fingerprint

        parts.append(generator_fingerprint())
    if options.constraints is not None:
        parts.append(options.constraints.fingerprint)
    if options.evaluation.objective is not Objective.TIME:
        parts.append(f"objective:{options.evaluation.objective.value}")
    key = json.dumps(parts)
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
        ConfigError: bad options, ``llm`` set without the agents package, or an energy
            objective where the device has no energy counter.
    """
    from kernelwright.evaluate.devices import resolve_device

    phase = on_phase or (lambda _msg: None)
    # options the device cannot serve fail before the capture's seconds are spent
    device = resolve_device(options.evaluation.device)
    if options.profile_best and device != "cuda":
        raise ConfigError("--profile-best profiles kernels on a GPU; this run is on the CPU")
    if options.profile_best and out_dir is None:
        raise ConfigError("--profile-best needs --out: the profile is written beside the report")
    objective = options.evaluation.objective
    if objective.needs_energy and (why := unavailable_reason(device)):
        raise ConfigError(f"--objective {objective.value} cannot be measured here: {why}")
    parallel = options.workers > 1 or options.scheduler is not None
    judged = dataclasses.replace(options.evaluation, device=device, size=_size(options, device))
    if options.constraints is not None:
        judged = options.constraints.apply(judged)
        budget = options.constraints.limit(budget)
    # Where the search will judge in a session of this process, its judge starts beside the
    # capture (_plan_beside_judge)
    session: EvalSession | None = None
    if evaluate_fn is None and not parallel and (options.llm is None or not options.llm.review):
        from kernelwright.evaluate.harness import EvalSession

        session = EvalSession(task, judged, executor=executor)
    try:
        return _optimize_in(task, options, judged, budget, out_dir, archive, session, phase,
                            on_event=on_event, executor=executor, evaluate_fn=evaluate_fn)
    finally:
        if session is not None:
            session.close()


def _optimize_in(
    task: Task | str | Path,
    options: OptimizeOptions,
    judged: EvalOptions,
    budget: Budget,
    out_dir: str | Path | None,
    archive: Archive,
    session: EvalSession | None,
    phase: Callable[[str], None],
    *,
    on_event: Callable[[SearchEvent], None] | None,
    executor: Any | None,
    evaluate_fn: Callable[..., Any] | None,
) -> OptimizeResult:
    """:func:`optimize_task` once its options are checked: ``judged`` are the candidates'
    evaluation options, ``session`` the session they are judged in, begun beside the capture
    (None: the search judges otherwise)."""
    phase("capturing the graph")
    plan = _plan_beside_judge(task, options, archive, session, budget)
    task_obj, device, size = plan.task, plan.device, plan.size
    if options.resume is not None:
        _check_resumable(archive, options.resume, task_obj)
    run_id = options.resume or run_id_for(task_obj, options, device, size)
    if not plan.designs and options.llm is None:
        result = OptimizeResult(task_obj, run_id, device, size, judged.precision, None, plan,
                                judged.objective, options.diagnoses, options.constraints)
        _write(result, out_dir, archive)
        return result
    proposer = _proposer(task_obj, plan, options, budget, archive, run_id)
    judge = evaluate_fn or getattr(proposer, "evaluate_fn", None)
    parallel = options.workers > 1 or options.scheduler is not None
    if parallel and evaluate_fn is None and judge is not None:
        raise ConfigError("--review asks before each new best in this process: drop --workers "
                          "and --scheduler, or --review")
    pool = _pool(options, device) if parallel and judge is None else None
    phase("evaluating candidates" + (f" on {pool.workers} workers" if pool else ""))
    try:
        search = run_search(
            task_obj,
            proposer,
            judged,
            archive,
            budget,
            run_id,
            executor=executor,
            seed=judged.seed or 0,
            on_event=on_event,
            evaluate_fn=judge,
            equivalence=plan.candidate_key,
            pool=pool,
            confirm=options.confirm and pool is None,
            screen=_spill_screen(task_obj, judged, options),
            session=session if judge is None else None,
            run_config={
                "proposer": proposer.name,
                "device": device,
                "size": size,
                "precision": judged.precision.value,
                "structures": len(plan.designs),
                "constraints": options.constraints.describe() if options.constraints else [],
            },
        )
    except KeyboardInterrupt:  # write out what is done; the archive lets a rerun resume
        so_far = OptimizeResult(
            task_obj,
            run_id,
            device,
            size,
            judged.precision,
            _so_far(task_obj, archive, run_id, judged.objective),
            plan,
            judged.objective,
            options.diagnoses,
            options.constraints,
        )
        so_far.unrendered = list(getattr(proposer, "skipped", []))
        _write(so_far, out_dir, archive)
        raise OptimizeInterrupted(so_far) from None
    finally:
        if pool is not None:
            pool.close()
    result = OptimizeResult(task_obj, run_id, device, size, judged.precision, search, plan,
                            judged.objective, options.diagnoses, options.constraints,
                            unrendered=list(getattr(proposer, "skipped", [])))
    if options.profile_best and out_dir is not None:
        phase("profiling the best candidate")
        result.best_profile = _profile_best(result, Path(out_dir))
    _write(result, out_dir, archive)
    return result


def _profile_best(result: OptimizeResult, out_dir: Path) -> tuple[str, ...]:
    """The diagnoses of the best candidate's kernels under Nsight Compute (its export beside
    the report), or one line saying why there are none: a failed profile costs the run
    nothing. Only kernelwright's own template candidates are profiled: the profiler runs them
    outside the harness's confinement."""
    best = result.best
    if best is None:
        return ("not profiled: no correct candidate",)
    if best.candidate.origin != "template":
        return (f"not profiled: the best candidate came from {best.candidate.origin}, and only "
                "kernelwright's own templates run outside the harness's confinement",)
    from kernelwright.hardware.profile import profile_solution

    try:
        _, findings = profile_solution(result.task, best.candidate.source,
                                       out_dir / "profile.csv")
    except ConfigError as exc:
        return (f"not profiled: {exc}",)
    return tuple(findings.for_prompt().splitlines()) or ("- nothing stands out in its counters",)


class OptimizeInterrupted(KeyboardInterrupt):
    """Ctrl-C during the search. ``result`` holds the candidates evaluated so far, and its
    outputs (best.py, report.md) are written; the same command resumes from the archive."""

    def __init__(self, result: OptimizeResult) -> None:
        super().__init__()
        self.result = result


def _so_far(task: Task, archive: Archive, run_id: str, objective: Objective) -> SearchResult:
    """The run's trials as the archive holds them (every verdict is archived as it arrives)."""
    found = SearchResult(run_id, stopped="interrupted")
    for rec in archive.history(task.sha256, run_id):
        found.trials.append(Trial(rec.candidate_id, rec.candidate, rec.verdict))
    found.best = best_correct(found.trials, objective)
    return found


def plan_only(
    task: Task | str | Path,
    options: OptimizeOptions,
    archive: Archive | None = None,
    *,
    graph: OpGraph | None = None,
) -> Any:
    """Stage 1's plan for ``task`` (capture, fusion, skills, ranked designs); nothing is run.
    ``graph``: the task's graph at the options' size, captured already.

    Raises:
        TaskError: the task cannot be loaded or captured.
    """
    from kernelwright.design.plan import plan_task
    from kernelwright.evaluate.devices import resolve_device
    from kernelwright.task import load_task

    device = resolve_device(options.evaluation.device)
    size = _size(options, device)
    task_obj = task if isinstance(task, Task) else load_task(task, size=size)
    if task_obj.size != size:
        task_obj = load_task(task_obj.path, size=size)
    return plan_task(task_obj, device, size, archive=archive, isolate=options.isolate_capture,
                     diagnosed=options.diagnosed, precision=options.evaluation.precision.value,
                     graph=graph)


def _plan_beside_judge(task: Task | str | Path, options: OptimizeOptions, archive: Archive,
                       session: EvalSession | None, budget: Budget) -> Any:
    """:func:`plan_only`, with ``session``'s judge started while the graph is captured in
    its child process: the judge computes the reference meanwhile. A run whose archived
    evaluations already spend ``budget`` (the same command run again) evaluates nothing, and
    its judge is left unstarted."""
    if session is None or _spent(archive, session, options, budget):
        return plan_only(task, options, archive)
    from kernelwright.design.capture import start_capture

    job = start_capture(session.task, session.size) if options.isolate_capture else None
    try:
        session.begin()
        graph = job.result() if job is not None else None
    finally:
        if job is not None:
            job.cancel()
    return plan_only(session.task, options, archive, graph=graph)


def _spent(archive: Archive, session: EvalSession, options: OptimizeOptions,
           budget: Budget) -> bool:
    """Whether the archive's run for the session's task holds the evaluations ``budget``
    allows already."""
    if budget.candidates is None:
        return False
    task = session.task
    run_id = options.resume or run_id_for(task, options, session.device, session.size)
    done = sum(1 for rec in archive.history(task.sha256, run_id)
               if Trial(rec.candidate_id, rec.candidate, rec.verdict).evaluated)
    return done >= budget.candidates


def _size(options: OptimizeOptions, device: str) -> str:
    """The task size candidates are judged at: ``auto`` is full on a GPU, small on the CPU."""
    size = options.evaluation.size
    if size == "auto":
        return "full" if device == "cuda" else "small"
    return size


def _pool(options: OptimizeOptions, device: str) -> Any:
    """Workers for the search's candidates: processes of this host, one GPU each where there
    are enough (``bench.pool``), or a Dask cluster (``bench.dask_pool``)."""
    from kernelwright.bench.pool import LocalPool, visible_gpus, worker_devices

    workers = options.workers
    pins, _ = worker_devices(workers, device, visible_gpus() if device == "cuda" else [])
    if options.scheduler is None:
        return LocalPool(workers, pins)
    from kernelwright.bench.dask_pool import LOCAL, DaskPool

    if options.scheduler == LOCAL:
        return DaskPool(LOCAL, workers, pins)
    return DaskPool(options.scheduler)


def _proposer(
    task: Task, plan: Any, options: OptimizeOptions, budget: Budget, archive: Archive, run_id: str
) -> Proposer:
    if options.llm is None:
        return _template_proposer(plan, options, budget)
    llm = _llm_proposer(task, plan, options, archive, run_id)
    if options.llm.only:
        return llm
    from kernelwright.search.constants import ConstantTuner
    from kernelwright.search.joint import JointProposer

    templates = [_template_proposer(plan, options, budget)] if plan.designs else []
    return JointProposer([*templates, llm, ConstantTuner(options.evaluation.objective)])


def _template_proposer(plan: Any, options: OptimizeOptions, budget: Budget) -> Proposer:
    """The templates' designs, searched as ``options.search`` says."""
    from kernelwright.search.templates import TemplateProposer

    # The constraints' parameter restrictions prune every tuning space built from the skills.
    library = options.constraints.restrict(plan.library) if options.constraints else plan.library
    objective = options.evaluation.objective
    if options.search in ("mcts", "evolution"):
        from kernelwright.search.decisions import DecisionSpace
        from kernelwright.search.evolution import EvolutionProposer
        from kernelwright.search.mcts import MCTSProposer

        space = DecisionSpace.of_plan(plan, library)
        if options.search == "mcts":
            return MCTSProposer(space, plan.render, objective=objective)
        return EvolutionProposer(space, plan.render, objective=objective)
    n = budget.candidates if budget.candidates is not None else 12
    structures = options.structures or max(1, min(len(plan.designs), (n + 1) // 2))
    return TemplateProposer(
        plan.designs,
        plan.render,
        library,
        tuning_strategy(options.tuner),
        prior=plan.warm_start,
        structures=structures,
        weights=plan.group_weights(),
        shapes=plan.constraint_names(),
        objective=objective,
    )


def tuning_strategy(name: str) -> Strategy:
    """The stage-2 strategy called ``name``; ``auto`` is ``neighbours-then-bo`` when its
    dependencies (SciPy) import, else ``neighbours``, which needs nothing.

    Raises:
        ConfigError: an unknown name, a missing dependency, or a replay-only strategy.
    """
    from kernelwright.tuning.strategies import get_strategy

    if name == "auto":
        try:
            return tuning_strategy("neighbours-then-bo")
        except ConfigError:  # SciPy is optional: coordinate descent needs nothing
            return tuning_strategy("neighbours")
    made = get_strategy(name)
    if not hasattr(made, "ask"):
        raise ConfigError(f"--tuner {name}: that strategy drives its own loop (replay only)")
    return made  # type: ignore[return-value]


def _llm_proposer(
    task: Task, plan: Any, options: OptimizeOptions, archive: Archive, run_id: str
) -> Proposer:
    llm = options.llm
    assert llm is not None
    try:
        from kernelwright.agents import StaticSkills, make_llm_proposer
        from kernelwright.agents.skills import to_hint
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
        constraints=options.constraints,
        notes=llm.notes,
        review=llm.review,
        archive=archive,
        run_id=run_id,
        seed_candidates=seeds,
        precision=options.evaluation.precision,
        objective=options.evaluation.objective,
        # the skills that hold in this run's own plan: its device and precision policy, and
        # no second capture of the task's graph
        skills=StaticSkills(tuple(to_hint(h) for h in plan_hints(plan))),
    )
    return proposer


def _check_resumable(archive: Archive, run_id: str, task: Task) -> None:
    """A run named to be continued must be one of this task's in the archive: a mistyped id
    would otherwise start a new run under that name."""
    found = next((r for r in archive.runs() if r.run_id == run_id), None)
    if found is None:
        raise ConfigError(f"--resume {run_id}: no such run in {archive.path}; "
                          "`kernelwright archive runs` lists the runs")
    if found.task_sha256 is not None and found.task_sha256 != task.sha256:
        raise ConfigError(f"--resume {run_id}: that run optimized another task (or another "
                          "version of this one)")


def _write(result: OptimizeResult, out_dir: str | Path | None, archive: Archive) -> None:
    if out_dir is None:
        return
    from kernelwright.design.report import write_outputs

    result.out_dir = Path(out_dir)
    result.written = write_outputs(result, Path(out_dir), archive)


def _median_ms(trial: Trial | None) -> float | None:
    stats = trial.verdict.timing.candidate if trial is not None else None
    return stats.median_ms if stats is not None else None


def summarise(result: OptimizeResult) -> dict[str, Any]:
    """A JSON-ready summary (for scripts and ``--json``); ``tree`` is the run's candidates with
    the candidate each was derived from (``parent``), to draw the search tree or lineage."""
    from kernelwright.search.lineage import lineage

    best = result.best
    v = best.verdict if best else None
    t = v.timing if v else None
    search = result.search
    return {
        "task": result.task.name,
        "run_id": result.run_id,
        "device": result.device,
        "size": result.size,
        "precision": result.precision.value,
        "evaluated": search.evaluated if search else 0,
        "refused": search.refused if search else 0,
        "screened_spilling": search.screened_spilling if search else 0,
        "pruned_equivalent": search.pruned_equivalent if search else 0,
        "correct": sum(1 for x in result.trials if x.verdict.correct),
        "best_candidate": best.candidate_id if best else None,
        "best_design": best.candidate.design if best else None,
        "objective": result.objective.value,
        "best_ms": t.candidate.median_ms if t and t.candidate else None,
        # the time the best was chosen on, and whether best_ms is a second evaluation's
        "chosen_ms": _median_ms(result.chosen),
        "confirmed": (search.confirmed.verdict.correct
                      if search is not None and search.confirmed is not None else None),
        "best_mj": t.candidate_energy.mj_per_call if t and t.candidate_energy else None,
        "eager_mj": t.eager_energy.mj_per_call if t and t.eager_energy else None,
        "speedup_vs_eager": t.speedup_vs_eager if t else None,
        "speedup_vs_compile": t.speedup_vs_compile if t else None,
        "sol_fraction": v.sol.fraction if v and v.sol else None,
        # best.py is the task's own model: every candidate cost more than eager PyTorch
        "returns_eager": result.eager_is_better,
        "stopped": result.search.stopped if result.search else "no template applies",
        "left_to_framework": [g["ops"] for g in result.plan.framework_groups()],
        "tree": lineage(result.trials),
        "diagnoses": list(result.diagnoses),
        "best_profile": list(result.best_profile),
    }


__all__: Sequence[str] = [
    "LLMConfig",
    "OptimizeInterrupted",
    "OptimizeOptions",
    "OptimizeResult",
    "SEARCH_MODES",
    "optimize_task",
    "plan_only",
    "run_id_for",
    "summarise",
    "tuning_strategy",
]
