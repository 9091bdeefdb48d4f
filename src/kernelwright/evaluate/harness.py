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

:class:`EvalSession` keeps one judge for many candidates of the same task (the reference and
baselines are computed once; every candidate still runs in a fresh process of its own). A search
uses it to screen candidates; ``evaluate`` is a session of one, with a fresh seed.
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
    candidate = solution if isinstance(solution, Candidate) else _read_solution(solution)
    # One candidate: a process pre-started for a next one would only compete with it.
    executor = executor or SubprocessExecutor(prestart=0)
    session = EvalSession(task, options, executor=executor, on_progress=on_progress)
    try:
        verdict = session.evaluate(candidate)
    finally:
        session.close()
    if archive is not None:
        archive.add(session.task, candidate, verdict)
    return verdict


class EvalSession:
    """Evaluate any number of candidates for one task against one judge.

    The judge (the reference's outputs, the baselines) starts on the first candidate that gets
    past the static checks. All candidates of a session see the same inputs (one base seed), so
    a search can compare them; a result worth reporting is re-checked by :func:`evaluate`.
    Without an ``executor``, the session runs its own :class:`SubprocessExecutor`, which
    pre-starts the next candidate's process (unless ``KERNELWRIGHT_PRESTART=0``) and is closed
    with the session; an executor passed in belongs to the caller, who closes it.
    """

    def __init__(
        self,
        task: Task | str | Path,
        options: EvalOptions | None = None,
        *,
        executor: Executor | None = None,
        on_progress: ProgressFn | None = None,
    ) -> None:
        self.options = opts = options or EvalOptions()
        self.device = resolve_device(opts.device)
        self.size = (
            opts.size if opts.size != "auto" else ("full" if self.device == "cuda" else "small")
        )
        task_obj = task if isinstance(task, Task) else load_task(task, size=self.size)
        self.task = task_obj if task_obj.size == self.size else load_task(task_obj.path, self.size)
        self.tolerance = _tolerance(opts, self.task)
        self.seed = opts.seed if opts.seed is not None else secrets.randbelow(2**31 - 1)
        self._own_executor: SubprocessExecutor | None = None
        if executor is None:
            executor = self._own_executor = SubprocessExecutor()
        self.executor = executor
        self.on_progress = on_progress
        self.transport = choose_transport(self.device)
        self.env = {"TRITON_INTERPRET": "1"} if self.device == "cpu" else {}
        self._workdir: Path | None = None
        self._judge: JudgeSession | None = None
        self._prepared: dict[str, Any] = {}
        self._count = 0

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> EvalSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the judge and a spare candidate process; remove the working folder."""
        if self._own_executor is not None:
            self._own_executor.close()
        if self._judge is not None:
            self._judge.close()
            self._judge = None
        if self._workdir is not None and not os.environ.get("KERNELWRIGHT_KEEP_WORKDIR"):
            shutil.rmtree(self._workdir, ignore_errors=True)
        self._workdir = None

    # -- evaluation --------------------------------------------------------------------------

    def evaluate(self, candidate: Candidate) -> Verdict:
        """Judge one candidate (static checks, its own process, comparison, runtime checks)."""
        started = time.monotonic()
        opts = self.options
        tree = _parse_or_none(candidate.source)
        static = run_checks("static", GuardContext(candidate.source, tree)) if opts.guard else []
        if opts.constraints is not None:
            static.extend(opts.constraints.violations(candidate.source))
        if static:
            return build_verdict(self._evidence(candidate, {}, None, {}, static, started))
        prepared = self._start_judge()
        job, report = self._run_candidate(candidate)
        violations: list[Any] = []
        if opts.guard and job.result is not None:
            ctx = GuardContext(candidate.source, tree, self.device, prepared, job.result, report)
            violations = run_checks("runtime", ctx)
        return build_verdict(self._evidence(candidate, prepared, job, report, violations, started))

    def _start_judge(self) -> dict[str, Any]:
        if self._judge is not None:
            return self._prepared
        opts = self.options
        self._workdir = workdir = Path(tempfile.mkdtemp(prefix="kw-eval-"))
        (workdir / "shared").mkdir()  # what the judge publishes for candidates
        distributions = (
            opts.distributions
            if opts.distributions is not None
            else bool(task_options(self.task).get("input_distributions", True))
        )
        want_compile = (
            opts.compile_baseline if opts.compile_baseline is not None else self.device == "cuda"
        )
        request = JudgeRequest(
            task_path=self.task.path,
            size=self.size,
            device=self.device,
            precision=opts.precision,
            tolerance=self.tolerance,
            seed=self.seed,
            trials=opts.trials,
            distributions=distributions,
            time_eager=opts.baselines,
            time_compile=opts.baselines and want_compile,
            cache_dir=str(cache_dir()),
            inputs_path=str(workdir / "shared" / "inputs.bin"),
            transport=self.transport,
            task_sha256=self.task.sha256,
            cache_baselines=opts.cache_baselines,
            widen_atol=opts.atol is None,
        )
        self._judge = JudgeSession(request, workdir / "judge", self.env)
        prepared = self._judge.wait_prepared(max(600.0, opts.timeout_s), self.on_progress)
        if not prepared.get("ok"):
            self.close()
            _raise_reference_failure(self.task, prepared)
        self._prepared = prepared
        self._inputs_path = request.inputs_path
        return prepared

    def _run_candidate(self, candidate: Candidate) -> tuple[Any, dict[str, Any]]:
        assert self._judge is not None and self._workdir is not None
        self._count += 1
        cand_dir = self._workdir / f"candidate-{self._count}"
        (cand_dir / "solution").mkdir(parents=True)
        sandbox = cand_dir / "sandbox"
        sandbox.mkdir()
        solution_path = cand_dir / "solution" / f"solution_{candidate.sha256[:12]}.py"
        solution_path.write_text(candidate.source)
        release = cand_dir / "release"
        request = CandidateRequest(
            solution_path=str(solution_path),
            inputs_path=self._inputs_path,
            outputs_path=str(cand_dir / "outputs.bin"),
            transport=self.transport,
            device=self.device,
            precision=self.options.precision,
            timing=self.options.timing,
            guard=self.options.guard,
            protected_paths=(self.task.path, str(home()), str(self._workdir / "judge")),
            release_path=str(release),
        )
        reports: list[dict[str, Any]] = []
        judge = self._judge

        def compare(result: dict[str, Any]) -> None:
            if result.get("published"):
                reports.append(judge.compare(result["published"]))

        job = self.executor.run(
            Job(
                CANDIDATE_WORKER,
                cand_dir,
                request,
                cwd=sandbox,
                env=self.env,
                release_path=release,
                prestart_device=self.device,
            ),
            self.options.timeout_s,
            self.on_progress,
            compare,
        )
        if not os.environ.get("KERNELWRIGHT_KEEP_WORKDIR"):
            shutil.rmtree(cand_dir, ignore_errors=True)
        return job, (reports[0] if reports else {})

    def _evidence(
        self,
        candidate: Candidate,
        prepared: dict[str, Any],
        job: Any,
        report: dict[str, Any],
        violations: list[Any],
        started: float,
    ) -> Evidence:
        return Evidence(
            precision=self.options.precision,
            tolerance=self.tolerance,
            device=self.device,
            seed=self.seed,
            trials=self.options.trials,
            task_sha256=self.task.sha256,
            solution_sha256=candidate.sha256,
            prepared=prepared,
            job=job,
            report=report,
            violations=tuple(violations),
            baselines=dict(prepared.get("baselines") or {}),
            baselines_cached=bool(prepared.get("baselines_cached")),
            timeout_s=self.options.timeout_s,
            duration_s=time.monotonic() - started,
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
    """``--atol/--rtol`` exactly; else the policy's, loosened (never tightened) by the task's.

    A task knows its own numerics (long fp32 prefix sums need a larger atol than 1e-4); a
    looser policy (bf16's 1e-2) must still apply to it.
    """
    default = opts.precision.default_tolerance
    options = task_options(task)
    atol = opts.atol if opts.atol is not None else max(default.atol, float(options.get("atol", 0)))
    rtol = opts.rtol if opts.rtol is not None else max(default.rtol, float(options.get("rtol", 0)))
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


__all__ = ["EvalSession", "evaluate"]
