"""``evaluate(task, solution) -> Verdict``: the one entry point of the harness.

    parent (this module)         judge process (trusted)           candidate's process
    ────────────────────         ───────────────────────           ───────────────────
    read the task (no exec)
    static guard checks
    start the judge ───────────► reference, footprint, memory
                                 plan, expected outputs
    start the process ──────────────────────────────────────────► confine itself, warm up, ready
    hand its socket to the judge► drives it call by call: ◄──────► import, calls, batches
                                 writes inputs, reads outputs,
                                 keeps the clock, compares
    runtime guard checks ◄────── the report
    the verdict, the archive; kill the process and all it started

The candidate's process never learns the task's path, never sees the judge's memory, and
writes nothing the parent reads as a result: the verdict is built from the judge's report
alone. Baselines (eager PyTorch, ``torch.compile``) are timed the same way, each in a process of
its own. A failure of the harness itself (the judge dies) is a :class:`HarnessError`, not a
verdict.

:class:`EvalSession` keeps one judge for many candidates of the same task (the reference and
baselines are computed once; every candidate still runs in a fresh process of its own). A
search uses it to screen candidates; ``evaluate`` is a session of one, with a fresh seed.
"""

from __future__ import annotations

import ast
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

from kernelwright.errors import EvalError, HarnessError, SolutionError, TaskError
from kernelwright.evaluate.baseline_cache import baseline_key, load_baselines, store_baselines
from kernelwright.evaluate.devices import resolve_device
from kernelwright.evaluate.executor import (
    CandidateProcess,
    Executor,
    JobResult,
    Launch,
    SubprocessExecutor,
)
from kernelwright.evaluate.fingerprint import harness_fingerprint
from kernelwright.evaluate.guard.registry import GuardContext, run_checks
from kernelwright.evaluate.judge import JudgeProcess, ProgressFn
from kernelwright.evaluate.options import EvalOptions
from kernelwright.evaluate.request import JudgeRequest
from kernelwright.evaluate.spawn import new_run_dir
from kernelwright.evaluate.verdict import BREAKDOWN_KEYS, Evidence, build_verdict
from kernelwright.paths import cache_dir, home
from kernelwright.records import Candidate, PhaseTime, Task, Tolerance, Verdict, Violation
from kernelwright.task.kernelbench import load_task, task_options

SOLUTION_FILE = "solution.py"
# The first of an evaluation's phases: the candidate's process starting (a cold start, or the
# rest of a spare's warm-up)
WAITING = "waiting for its process"
# The session's step before its first candidate: the judge's process computes the reference's
# outputs and footprint, plans the device's memory and measures the ceilings (the part of it the
# first evaluation waits for, where the session was begun ahead of it)
STARTING_JUDGE = "starting the judge (the reference)"
# Candidates whose source kernelwright's templates wrote: their processes share compiled
# kernels (evaluate.kernel_cache); no other candidate's process gets or leaves any
KERNEL_SHARING_ORIGINS = frozenset({"template"})
# Spread (inter-quartile range over median) past which a baseline is not cached: the machine was
# busy, and a cached number would mislead every later evaluation.
MAX_CACHED_SPREAD = {"cuda": 0.2, "cpu": 0.5}


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
        executor: starts the candidate's process (default: a local, confined subprocess).
        archive: an :class:`kernelwright.archive.Archive` to record the verdict in.
        on_progress: called with a short phase description as the evaluation advances.

    Raises:
        TaskError, SolutionError, ConfigError: bad input (a CLI maps these to exit code 2).
        EvalError: the task cannot be evaluated (its reference failed, or it is too large).
        HarnessError: the harness itself failed (exit code 3).
    """
    candidate = solution if isinstance(solution, Candidate) else _read_solution(solution)
    # One candidate: a process pre-started for a next one would only compete with it.
    own = executor is None
    executor = executor or SubprocessExecutor(prestart=0)
    session = EvalSession(task, options, executor=executor, on_progress=on_progress)
    try:
        verdict = session.evaluate(candidate)
    finally:
        session.close()
        if own:
            executor.close()
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
        self.launch = Launch(
            device=self.device,
            extra_env={"TRITON_INTERPRET": "1"} if self.device == "cpu" else {},
            cpu_seconds=int(max(600.0, 4 * opts.timeout_s) * max(1, os.cpu_count() or 1)),
        )
        self._run_dir: Path | None = None
        self._judge: JudgeProcess | None = None
        self._prepared: dict[str, Any] = {}
        self._baselines: dict[str, Any] | None = None
        self._baselines_cached = False
        # the session's own steps since the last verdict (Verdict.setup), seconds each
        self._setup: list[PhaseTime] = []

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> EvalSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the judge and spare processes; remove the session's folder."""
        if self._own_executor is not None:
            self._own_executor.close()
        if self._judge is not None:
            self._judge.close()
            self._judge = None
            self._prepared = {}  # an evaluation after this starts a judge again
        if self._run_dir is not None and not os.environ.get("KERNELWRIGHT_KEEP_WORKDIR"):
            shutil.rmtree(self._run_dir, ignore_errors=True)
        self._run_dir = None

    # -- evaluation --------------------------------------------------------------------------

    def evaluate(self, candidate: Candidate, *, race_ms: float | None = None) -> Verdict:
        """Judge one candidate (static checks, its own process, the judge, runtime checks).

        ``race_ms``: the best time a search has measured with this judge; the candidate's
        timing stops after the fewest batches once it is clearly slower (the verdict says so).
        """
        started = time.monotonic()
        opts = self.options
        tree = _parse_or_none(candidate.source)
        static = run_checks("static", GuardContext(candidate.source, tree)) if opts.guard else []
        if opts.constraints is not None:
            static.extend(opts.constraints.violations(candidate.source, candidate.params))
        if static:
            return build_verdict(self._evidence(candidate, None, tuple(static), started))
        if not self._prepared:
            begun = time.monotonic()
            self._start_judge()
            self._setup.append(PhaseTime(STARTING_JUDGE, time.monotonic() - begun))
        baselines = self._ensure_baselines()
        job = self._run("candidate", candidate.source, opts.timing, opts.guard, race_ms,
                        share_kernels=candidate.origin in KERNEL_SHARING_ORIGINS)
        violations: list[Any] = []
        if opts.guard and job.result is not None:
            ctx = GuardContext(candidate.source, tree, self.device, self._prepared, job.result)
            violations = run_checks("runtime", ctx)
        violations += determinism_violations(job.result)
        violations += memory_violations(job.result, opts.memory_ceiling_bytes)
        evidence = self._evidence(candidate, job, tuple(violations), started, baselines)
        return build_verdict(evidence)

    def begin(self) -> None:
        """Start the judge's process (and the processes its first evaluation runs) without
        waiting for it: the judge computes the reference while the caller does other work
        (``optimize`` captures the task's graph meanwhile); the first evaluation waits for
        what is left. Where judges are forked (the CPU's) this waits for the fork server's
        own start (seconds, once a process); a GPU's processes start from scratch and it
        returns as soon as they exist."""
        if self._judge is not None:
            return
        opts = self.options
        if self._run_dir is None:
            self._run_dir = new_run_dir()
        distributions = (
            opts.distributions
            if opts.distributions is not None
            else bool(task_options(self.task).get("input_distributions", True))
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
            cache_dir=str(cache_dir()),
            task_sha256=self.task.sha256,
            widen_atol=opts.atol is None,
            run_dir=str(self._run_dir),
            secret=self._secret(),
            shape_ranges=opts.shape_ranges,
            energy=opts.objective.needs_energy,
        )
        env = {"TRITON_INTERPRET": "1"} if self.device == "cpu" else {}
        env["HOME"] = os.environ.get("HOME", str(self._run_dir))
        env["OMP_NUM_THREADS"] = "1" if self.device == "cpu" else env.get("OMP_NUM_THREADS", "4")
        self._judge = JudgeProcess(request, self._run_dir / "judge", env)
        # The processes the first evaluation runs (each baseline's, unless the cache has it, and
        # the candidate's) start while the judge prepares, instead of one after another after
        # it: on a GPU each takes seconds to start cold
        self.executor.warm(self.launch, 1 + len(self._wanted_baselines()))

    def _start_judge(self) -> None:
        """Begin the session, unless the caller did, and wait until the judge has prepared."""
        if self._prepared:
            return
        self.begin()
        assert self._judge is not None
        opts = self.options
        prepared = self._judge.wait_prepared(max(600.0, opts.timeout_s), self.on_progress)
        if not prepared.get("ok"):
            self.close()
            _raise_reference_failure(self.task, prepared)
        prepared["precision"] = opts.precision.value
        self._store_ceilings(prepared)
        self._prepared = prepared

    def _secret(self) -> str:
        """What every seed of the session is derived from: random, unless the user asked for a
        reproducible run with --seed (whoever knows that seed can then compute the inputs)."""
        import hashlib

        if self.options.seed is None:
            return secrets.token_hex(16)
        return hashlib.sha256(f"kernelwright seed {self.options.seed}".encode()).hexdigest()

    def _run(self, role: str, source: str, timing: bool, guard: bool,
             race_ms: float | None = None, *, share_kernels: bool = False) -> JobResult:
        judge = self._judge
        assert judge is not None
        plan = self._prepared.get("memory") or {}
        fraction = None
        if self.device == "cuda" and plan.get("candidate_gb") and plan.get("free_gb"):
            fraction = min(0.95, 1.1 * plan["candidate_gb"] / plan["free_gb"] + 0.05)
        timeout = self.options.timeout_s if role == "candidate" else max(
            900.0, self.options.timeout_s)

        def drive(process: CandidateProcess) -> dict[str, Any]:
            command = {"role": role, "timing": timing, "guard": guard,
                       "memory_fraction": fraction, "source_file": SOLUTION_FILE,
                       "repeat": role == "candidate" and self.options.determinism,
                       "race_ms": race_ms}
            report = judge.judge(process.sock, command, timeout, self.on_progress, process.watch)
            if not report.get("containment"):
                report["containment"] = (process.ready or {}).get("containment") or {}
            return report

        job = self.executor.run(self.launch, {SOLUTION_FILE: source}, drive,
                                share_kernels=share_kernels)
        if job.result is not None:  # where the evaluation's seconds went, its wait first
            job.result["phases_s"] = [[WAITING, round(job.wait_s, 4)],
                                      *(job.result.get("phases_s") or [])]
        return job

    def _ensure_baselines(self) -> dict[str, Any]:
        """Eager and torch.compile timings: from the cache, else measured in processes of their
        own through the same clock as candidates."""
        if self._baselines is not None:
            return self._baselines
        opts = self.options
        wanted = self._wanted_baselines()
        info = self._prepared.get("device_info") or {}
        cache = cache_dir() if opts.cache_baselines else None
        key = baseline_key(self.task.sha256, self.size, str(info.get("name")),
                           opts.precision.value,
                           f"torch {info.get('torch')} triton {info.get('triton')} "
                           f"harness {harness_fingerprint()}")
        found = (load_baselines(cache, key) or {}) if cache is not None else {}
        # A baseline cached without energy, or with the short windows of a run ranked by time,
        # is measured again when the run ranks by energy (like for like with its candidates).
        missing = [name for name in wanted if name not in found
                   or (opts.objective.needs_energy and not _metered(found[name]))]
        for name in missing:
            begun = time.monotonic()
            job = self._run("baseline", baseline_source(self.task, self.size, name), True, False)
            self._setup.append(PhaseTime(
                f"{'torch.compile' if name == 'compile' else 'eager'} baseline",
                time.monotonic() - begun))
            timing = (job.result or {}).get("timing")
            failure = (job.result or {}).get("failure")
            if name == "eager" and failure and failure.get("check") == "protocol":
                # the task's own model is trusted: the protocol refusing it is the harness's
                # fault (its processes' settings), and every honest candidate would be refused
                why = failure.get("message")
                raise HarnessError(
                    f"the harness's protocol refused the task's own model ({why}); this is a "
                    "kernelwright fault, not a candidate's: nothing of this task can be judged "
                    "until it is fixed")
            if timing and timing.get("samples_ms") and not failure:
                found[name] = {"samples_ms": timing["samples_ms"], "method": timing["method"],
                               "energy": timing.get("energy")}
                # where its time went (records.CallBreakdown), a diagnostic kept beside it
                found[name] |= {key: timing[key] for key in BREAKDOWN_KEYS if key in timing}
            else:
                why = (failure or {}).get("message") or "no timing"
                self._prepared.setdefault("notes", []).append(
                    f"{'torch.compile' if name == 'compile' else 'eager'} baseline failed: "
                    f"{why}"[:300])
        if cache is not None and missing:
            steady = {n: v for n, v in found.items() if _steady(v, self.device)}
            if steady:
                store_baselines(cache, key, steady)
        self._baselines = {name: found[name] for name in wanted if name in found}
        self._baselines_cached = not missing
        return self._baselines

    def _wanted_baselines(self) -> list[str]:
        """The baselines the options ask for: eager, and torch.compile (by default on a GPU)."""
        opts = self.options
        want_compile = (
            opts.compile_baseline if opts.compile_baseline is not None else self.device == "cuda"
        )
        if not (opts.baselines and opts.timing):
            return []
        return ["eager", "compile"] if want_compile else ["eager"]

    def _store_ceilings(self, prepared: dict[str, Any]) -> None:
        from kernelwright.hardware.ceilings import store_ceilings

        ceilings = prepared.get("ceilings") or {}
        if ceilings.get("measured") and self.options.cache_baselines:
            store_ceilings(cache_dir(), str(ceilings["key"]), ceilings)

    def _evidence(
        self,
        candidate: Candidate,
        job: JobResult | None,
        violations: tuple[Any, ...],
        started: float,
        baselines: dict[str, Any] | None = None,
    ) -> Evidence:
        labels = list(self._prepared.get("notes") or [])
        labels = [f"note: {n}" for n in labels]
        if job is not None:
            labels += [f"containment: {g}" for g in _containment_gaps(job, self._protected())]
        if self.options.memory_ceiling_bytes is not None and self.device != "cuda":
            labels.append("note: memory ceiling not checked (peak memory is measured on a GPU)")
        return Evidence(
            precision=self.options.precision,
            tolerance=self.tolerance,
            device=self.device,
            seed=self.seed,
            trials=self.options.trials,
            task_sha256=self.task.sha256,
            solution_sha256=candidate.sha256,
            prepared=self._prepared,
            job=job,
            violations=violations,
            baselines=dict(baselines or {}),
            baselines_cached=self._baselines_cached,
            timeout_s=self.options.timeout_s,
            duration_s=time.monotonic() - started,
            labels=tuple(labels),
            setup=self._take_setup(),
        )

    def _take_setup(self) -> tuple[PhaseTime, ...]:
        """The session's steps since the last verdict, which the next verdict carries."""
        taken, self._setup = tuple(self._setup), []
        return taken

    def _protected(self) -> tuple[str, ...]:
        judge_dir = str(self._run_dir / "judge") if self._run_dir else ""
        return tuple(
            p for p in (self.task.path, str(home()), str(cache_dir()), judge_dir) if p)


def measure_baselines(
    task: Task | str | Path, options: EvalOptions, on_progress: ProgressFn | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Eager PyTorch and torch.compile for one task, as an evaluation would time them.

    Returns the baselines (``{"eager": {"samples_ms": [...], "method": ...}, "compile": ...}``,
    a failed one missing) and the judge's summary of the task (device, work, ceilings, notes).
    Raises like :func:`evaluate` for a task that cannot be judged.
    """
    with EvalSession(task, options, on_progress=on_progress) as session:
        session._start_judge()
        baselines = session._ensure_baselines()
        return dict(baselines), dict(session._prepared)


def baseline_source(task: Task, size: str, kind: str) -> str:
    """A solution file whose ``ModelNew`` is the task's own model: eager, or compiled."""
    from kernelwright.task.module import task_source

    text = task_source(task.path, size)
    if kind == "eager":
        return text + "\n\n# kernelwright baseline: the task's own model, eager\nModelNew = Model\n"
    return text + (
        "\n\n# kernelwright baseline: the task's own model under torch.compile\n"
        "import torch as _kw_torch\n\n\n"
        "class ModelNew(_kw_torch.nn.Module):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__()\n"
        "        self.model = Model(*args, **kwargs)\n"
        "        self.compiled = _kw_torch.compile(self.model)\n\n"
        "    def forward(self, *args):\n"
        "        return self.compiled(*args)\n"
    )


def _metered(raw: dict[str, Any]) -> bool:
    """A baseline's energy was summed over windows long enough to rank by."""
    from kernelwright.hardware.energy import RANKING_WINDOW_MS

    energy = raw.get("energy")
    window = energy.get("window_ms") if isinstance(energy, dict) else None
    return isinstance(window, int | float) and window >= RANKING_WINDOW_MS


def _steady(raw: dict[str, Any], device: str) -> bool:
    """The samples' spread says the machine was not busy (worth caching)."""
    import statistics

    data = sorted(raw.get("samples_ms") or [])
    if len(data) < 3:
        return False
    q = statistics.quantiles(data, n=4)
    median = statistics.median(data)
    return bool(median > 0 and (q[2] - q[0]) / median <= MAX_CACHED_SPREAD.get(device, 0.2))


def _containment_gaps(job: JobResult, protected: tuple[str, ...]) -> list[str]:
    """What the candidate's process could reach that it should not have."""
    from kernelwright.evaluate.containment import ContainmentReport, default_read_roots

    c = job.containment
    report = ContainmentReport(
        landlock_abi=int(c.get("landlock_abi") or 0), seccomp=bool(c.get("seccomp")),
        sealed=bool(c.get("sealed")), pid_namespace=bool(c.get("pid_namespace")))
    gaps = report.gaps()
    if report.seccomp and not report.sealed and (job.result or {}).get("runs"):
        gaps.append("not sealed: it could still start processes after compiling")
    if report.landlock_abi:
        roots = default_read_roots()
        exposed = [p for p in protected if _under_any(p, roots)]
        if exposed:
            gaps.append(f"readable through a system or package folder: {', '.join(exposed)}")
    return gaps


def _under_any(path: str, roots: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    system = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc")
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in (*roots, *system))


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


def determinism_violations(result: dict[str, Any] | None) -> list[Violation]:
    """The determinism clause's refusal when the repeated runs' outputs differed."""
    repeat = (result or {}).get("repeat")
    if not isinstance(repeat, dict) or repeat.get("identical", True):
        return []
    which = ", ".join(str(i) for i in repeat.get("outputs") or [])
    return [Violation(
        "constraint-determinism",
        f"output(s) {which} differ bit for bit between two runs on the same inputs; the "
        "constraints require bit-identical results run to run",
    )]


def memory_violations(result: dict[str, Any] | None, ceiling: int | None) -> list[Violation]:
    """The memory clause's refusal when a checked call's peak extra memory passed ``ceiling``.

    The peak is measured in the candidate's process (torch's allocator, outputs excluded): it
    can refuse a candidate, never vouch for one. Memory taken outside torch's allocator (an
    extension's own cudaMalloc) is not seen.
    """
    observed = (result or {}).get("observed") or {}
    peak = observed.get("peak_extra_bytes") if isinstance(observed, dict) else None
    if ceiling is None or not isinstance(peak, int) or peak <= ceiling:
        return []
    return [Violation(
        "constraint-memory",
        f"a checked call took {peak} bytes of device memory beyond its inputs, parameters and "
        f"outputs; the constraints allow at most {ceiling}",
    )]


def _parse_or_none(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _raise_reference_failure(task: Task, prepared: dict[str, Any]) -> None:
    kind = prepared.get("kind")
    if kind == "task":
        raise TaskError(str(prepared.get("error")))
    if kind == "size":
        raise EvalError(f"{task.path}: too large for this device: {prepared.get('error')}")
    raise EvalError(
        f"{task.path}: the task's reference failed: {prepared.get('error')}; fix the task "
        "(it must run as plain PyTorch) before evaluating solutions for it"
    )


__all__ = ["EvalSession", "baseline_source", "evaluate", "measure_baselines"]
