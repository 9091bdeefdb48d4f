"""``evaluate(task, solution) -> Verdict``: the one entry point of the harness.

    parent (this module)          judge process                  candidate process
    ────────────────────          ─────────────                  ─────────────────
    load task (no execution)
    static guard checks
    start judge  ───────────────► reference runs, baselines,
                                  publishes inputs
    start candidate ────────────────────────────────────────────► import, runs, timing,
                                                                  ablation; publishes outputs
    ask judge to compare ───────► compares every element ◄──────── (outputs stay alive)
    runtime guard checks
    build the verdict, archive it

The reference and its expected outputs never enter the candidate's process; the candidate's
process never learns the task's path; each child is killed with its process group.
"""

from __future__ import annotations

import ast
import os
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from kernelwright.errors import SolutionError
from kernelwright.evaluate.devices import resolve_device
from kernelwright.evaluate.executor import Executor, Job, ProgressFn, SubprocessExecutor
from kernelwright.evaluate.guard.registry import GuardContext, run_checks
from kernelwright.evaluate.judge import JudgeSession
from kernelwright.evaluate.options import EvalOptions
from kernelwright.evaluate.request import CandidateRequest, JudgeRequest
from kernelwright.evaluate.transport import choose_transport
from kernelwright.evaluate.verdict import Evidence, build_verdict
from kernelwright.paths import cache_dir, home
from kernelwright.records import Candidate, Task, Tolerance, Verdict
from kernelwright.task.kernelbench import load_task, task_options

CANDIDATE_WORKER = "kernelwright.evaluate.candidate_worker"


def evaluate(
    task: Task | str | Path,
    solution: Candidate | str | Path,
    options: EvalOptions | None = None,
    *,
    executor: Executor | None = None,
    archive: Any | None = None,
    on_progress: ProgressFn | None = None,
) -> Verdict:
    """Evaluate a KernelBench solution against a task and return the verdict.

    Args:
        task: a task file path, or a :class:`Task` from :func:`kernelwright.task.load_task`.
        solution: a solution file path, or a :class:`Candidate` holding the source.
        options: see :class:`EvalOptions`; defaults evaluate on a GPU when one is visible.
        executor: runs the candidate's process (default: a local subprocess).
        archive: an :class:`kernelwright.archive.Archive` to record the verdict in.
        on_progress: called with a short phase description as the evaluation advances.

    Raises:
        TaskError, SolutionError, ConfigError: bad input (a CLI maps these to exit code 2).
        EvalError: the task's own reference failed, so nothing can be judged.
    """
    opts = options or EvalOptions()
    started = time.monotonic()
    device = resolve_device(opts.device)
    size = opts.size if opts.size != "auto" else ("full" if device == "cuda" else "small")
    task_obj = task if isinstance(task, Task) else load_task(task, size=size)
    if task_obj.size != size:
        task_obj = load_task(task_obj.path, size=size)
    candidate = solution if isinstance(solution, Candidate) else _read_solution(solution)
    tolerance = _tolerance(opts, task_obj)
    seed = opts.seed if opts.seed is not None else secrets.randbelow(2**31 - 1)
    evidence: dict[str, Any] = dict(
        precision=opts.precision,
        tolerance=tolerance,
        device=device,
        seed=seed,
        trials=opts.trials,
        task_sha256=task_obj.sha256,
        solution_sha256=candidate.sha256,
        timeout_s=opts.timeout_s,
    )

    tree = _parse_or_none(candidate.source)
    static = run_checks("static", GuardContext(candidate.source, tree)) if opts.guard else []
    if opts.constraints is not None:
        static.extend(opts.constraints.violations(candidate.source))
    if static:
        verdict = build_verdict(
            Evidence(
                **evidence,
                prepared={},
                job=None,
                report={},
                violations=tuple(static),
                baselines={},
                baselines_cached=False,
                duration_s=time.monotonic() - started,
            )
        )
        _record(archive, task_obj, candidate, verdict)
        return verdict

    workdir = Path(tempfile.mkdtemp(prefix="kw-eval-"))
    try:
        verdict = _run(
            task_obj,
            candidate,
            opts,
            device,
            size,
            seed,
            tolerance,
            tree,
            evidence,
            workdir,
            executor or SubprocessExecutor(),
            on_progress,
            started,
        )
    finally:
        if not os.environ.get("KERNELWRIGHT_KEEP_WORKDIR"):
            shutil.rmtree(workdir, ignore_errors=True)
    _record(archive, task_obj, candidate, verdict)
    return verdict


def _run(
    task: Task,
    candidate: Candidate,
    opts: EvalOptions,
    device: str,
    size: str,
    seed: int,
    tolerance: Tolerance,
    tree: ast.Module | None,
    evidence: dict[str, Any],
    workdir: Path,
    executor: Executor,
    on_progress: ProgressFn | None,
    started: float,
) -> Verdict:
    transport = choose_transport(device)
    (workdir / "shared").mkdir()  # what the judge publishes for the candidate
    env = {"TRITON_INTERPRET": "1"} if device == "cpu" else {}
    options = task_options(task)
    distributions = (
        opts.distributions
        if opts.distributions is not None
        else bool(options.get("input_distributions", True))
    )
    want_compile = opts.compile_baseline if opts.compile_baseline is not None else device == "cuda"
    judge_request = JudgeRequest(
        task_path=task.path,
        size=size,
        device=device,
        precision=opts.precision,
        tolerance=tolerance,
        seed=seed,
        trials=opts.trials,
        distributions=distributions,
        time_eager=opts.baselines,
        time_compile=opts.baselines and want_compile,
        cache_dir=str(cache_dir()),
        inputs_path=str(workdir / "shared" / "inputs.bin"),
        transport=transport,
        task_sha256=task.sha256,
        cache_baselines=opts.cache_baselines,
    )
    with JudgeSession(judge_request, workdir / "judge", env) as judge:
        prepared = judge.wait_prepared(max(600.0, opts.timeout_s), on_progress)
        if not prepared.get("ok"):
            _raise_reference_failure(task, prepared)
        baselines = dict(prepared.get("baselines") or {})

        cand_dir = workdir / "candidate"
        (cand_dir / "solution").mkdir(parents=True)
        (workdir / "sandbox").mkdir()
        solution_path = cand_dir / "solution" / f"solution_{candidate.sha256[:12]}.py"
        solution_path.write_text(candidate.source)
        release = cand_dir / "release"
        request = CandidateRequest(
            solution_path=str(solution_path),
            inputs_path=judge_request.inputs_path,
            outputs_path=str(cand_dir / "outputs.bin"),
            transport=transport,
            device=device,
            precision=opts.precision,
            timing=opts.timing,
            guard=opts.guard,
            protected_paths=(task.path, str(home()), str(workdir / "judge")),
            release_path=str(release),
        )
        reports: list[dict[str, Any]] = []

        def compare(result: dict[str, Any]) -> None:
            if result.get("published"):
                reports.append(judge.compare(result["published"]))

        job = executor.run(
            Job(
                CANDIDATE_WORKER,
                cand_dir,
                request,
                cwd=workdir / "sandbox",
                env=env,
                release_path=release,
            ),
            opts.timeout_s,
            on_progress,
            compare,
        )
    report = reports[0] if reports else {}
    violations: list[Any] = []
    if opts.guard and job.result is not None:
        ctx = GuardContext(candidate.source, tree, device, prepared, job.result, report)
        violations = run_checks("runtime", ctx)
    return build_verdict(
        Evidence(
            **evidence,
            prepared=prepared,
            job=job,
            report=report,
            violations=tuple(violations),
            baselines=baselines,
            baselines_cached=bool(prepared.get("baselines_cached")),
            duration_s=time.monotonic() - started,
        )
    )


def _read_solution(path: str | Path) -> Candidate:
    p = Path(path)
    if not p.exists():
        raise SolutionError(f"{p}: no such solution file; pass a KernelBench solution (.py) file")
    if p.is_dir():
        raise SolutionError(f"{p}: is a directory; pass one solution file")
    try:
        source = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SolutionError(f"{p}: cannot be read ({exc})") from exc
    return Candidate(source=source, origin="user")


def _tolerance(opts: EvalOptions, task: Task) -> Tolerance:
    default = opts.precision.default_tolerance
    options = task_options(task)
    atol = opts.atol if opts.atol is not None else float(options.get("atol", default.atol))
    rtol = opts.rtol if opts.rtol is not None else float(options.get("rtol", default.rtol))
    return Tolerance(atol=atol, rtol=rtol)


def _parse_or_none(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _raise_reference_failure(task: Task, prepared: dict[str, Any]) -> None:
    from kernelwright.errors import EvalError, TaskError

    if prepared.get("kind") == "task":
        raise TaskError(str(prepared.get("error")))
    raise EvalError(
        f"{task.path}: the task's reference failed: {prepared.get('error')}; fix the task "
        "(it must run as plain PyTorch) before evaluating solutions for it"
    )


def _record(archive: Any | None, task: Task, candidate: Candidate, verdict: Verdict) -> None:
    if archive is not None:
        archive.add(task, candidate, verdict)


__all__ = ["evaluate"]
