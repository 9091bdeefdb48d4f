"""The spine of kernelwright: the records that flow through the pipeline.

    Task (KernelBench file) -> Candidate (a ModelNew source) -> Verdict (harness) -> Archive

Every record is a frozen dataclass made of plain values, so it pickles across the subprocess
boundary and round-trips through JSON (``to_dict`` / ``from_dict``) into the archive and reports.
No record holds a tensor.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar


def sha256_text(text: str) -> str:
    """The sha256 hex digest of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Status(enum.StrEnum):
    """How an evaluation ended. Reports and search switch on this, never on message strings."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    REJECTED = "rejected"


class Precision(enum.StrEnum):
    """Precision policy, applied identically to the candidate and to both baselines.

    ``fp32``: strict float32, TF32 off. ``tf32``: float32 tensors, TF32 matrix units allowed.
    ``bf16``: floating inputs and weights cast to bfloat16.
    """

    FP32 = "fp32"
    TF32 = "tf32"
    BF16 = "bf16"

    @property
    def default_tolerance(self) -> Tolerance:
        """The policy's default ``allclose`` tolerance (fp32: 1e-4; tf32 and bf16: 1e-2)."""
        tol = 1e-4 if self is Precision.FP32 else 1e-2
        return Tolerance(atol=tol, rtol=tol)


@dataclass(frozen=True, slots=True)
class Tolerance:
    """Element-wise ``|out - ref| <= atol + rtol * |ref|``; also bounds the normalised error."""

    atol: float
    rtol: float


@dataclass(frozen=True, slots=True)
class Task:
    """A KernelBench problem file, validated but not executed (execution happens in a child).

    Attributes:
        path: absolute path of the file.
        name: the file's stem, used as the task id in suites.
        source: the file's text.
        sha256: digest of ``source``.
        size: ``"full"`` or ``"small"``: which module constants the children use (``"small"``
            applies the overrides in the task's ``KERNELWRIGHT["small"]`` dict, if any).
        has_variants: the task defines ``get_input_variants()``.
    """

    path: str
    name: str
    source: str
    sha256: str
    size: str = "full"
    has_variants: bool = False


@dataclass(frozen=True, slots=True)
class Violation:
    """A guard check that a candidate tripped: the check's registered name and a plain reason."""

    check: str
    reason: str


@dataclass(frozen=True, slots=True)
class TimingStats:
    """Robust statistics of one timed callable, computed by the parent from raw samples."""

    median_ms: float
    mean_ms: float
    min_ms: float
    iqr_ms: float
    n_runs: int


@dataclass(frozen=True, slots=True)
class EnergyStats:
    """Energy of one timed callable per call, from the GPU's energy counter as the judge reads
    it (see :mod:`kernelwright.hardware.energy`)."""

    mj_per_call: float
    watts: float  # the mean power over the judge's timed windows
    mj_per_call_se: float = 0.0  # standard error (the counter moves in steps of ~100 ms)


@dataclass(frozen=True, slots=True)
class CallBreakdown:
    """Where a timed call's time went, per call (medians over the timed batches, ms): a
    diagnostic beside the judge's time, never a result.

    The judge's own phases of a batch, divided by its calls: ``write_ms`` writing the inputs and
    flushing the L2 (from the judge's first write to the device being idle), ``turn_ms`` the
    process's turn (from the batch's message to its reply), ``read_ms`` mapping and sampling the
    outputs read back (``map_ms`` of it opening them: mapping their memory on a GPU, unpacking
    them on the CPU); ``fixed_ms`` what the judge's calibration subtracted, and its share of
    each phase (``write_fixed_ms``, ``turn_fixed_ms``, ``read_fixed_ms``, of which
    ``map_fixed_ms`` for the mappings): a phase well above its share is where the time the clock
    keeps goes. ``mapped_mb`` is the memory the judge mapped to read them (MB a call): whole
    allocations, so above the outputs' own size where they lie in a larger one, which costs
    more to map than the calibration's allocation of their size.

    What the timed process reported of itself: ``events_ms`` the call (CUDA events around the
    forward); ``span_ms`` the first call's start to the last one's end (gaps between calls
    included: above ``events_ms`` when the device waited for the host); ``issue_ms`` the host's
    time issuing a call (about ``span_ms``: the calls are host-bound), of which ``forward_ms``
    inside the forward and ``prelude_ms`` in the process's own steps before it (revealing the
    held-back inputs, fresh views of them, the start event); ``setup_ms`` the host's
    time from the batch's message to the first call; ``run_ms`` from issuing the first call to
    the device being idle (``span_ms`` plus the device's start and the wait's wake-up);
    ``reply_ms`` from the device's last work to the reply (checking and describing the
    outputs); ``busy_ms`` the whole turn by the process's own clock, so that ``turn_ms`` less
    ``busy_ms`` is what the messages between the two processes and their wake-ups took;
    ``device_allocs`` the device allocations PyTorch's allocator made a call and
    ``alloc_retries`` the times a call met the process's memory cap and freed the allocator's
    cache (each waits for the device: the calls then stop overlapping the host's issuing).
    """

    write_ms: float | None = None
    turn_ms: float | None = None
    read_ms: float | None = None
    map_ms: float | None = None
    fixed_ms: float | None = None
    write_fixed_ms: float | None = None
    turn_fixed_ms: float | None = None
    read_fixed_ms: float | None = None
    map_fixed_ms: float | None = None
    mapped_mb: float | None = None
    events_ms: float | None = None
    span_ms: float | None = None
    issue_ms: float | None = None
    forward_ms: float | None = None
    prelude_ms: float | None = None
    setup_ms: float | None = None
    reply_ms: float | None = None
    run_ms: float | None = None
    busy_ms: float | None = None
    device_allocs: float | None = None
    alloc_retries: float | None = None


@dataclass(frozen=True, slots=True)
class Timing:
    """Candidate and baseline timings under one precision policy.

    ``speedup_vs_eager`` is ``eager.median_ms / candidate.median_ms`` (None when either is missing).
    ``method`` says how the numbers were taken; ``representative`` is False on the CPU and under
    Triton's interpreter, where timings say nothing about a GPU.
    """

    candidate: TimingStats | None = None
    eager: TimingStats | None = None
    compile: TimingStats | None = None
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    method: str = ""
    representative: bool = False
    wall_ms: float | None = None
    launch_ms: float | None = None
    baselines_cached: bool = False
    notes: tuple[str, ...] = ()
    # Energy per call (None where the device has no energy counter, or a baseline was cached
    # before energy was measured)
    candidate_energy: EnergyStats | None = None
    eager_energy: EnergyStats | None = None
    compile_energy: EnergyStats | None = None
    # Where each one's time went (see CallBreakdown): a diagnostic beside the judge's numbers
    candidate_breakdown: CallBreakdown | None = None
    eager_breakdown: CallBreakdown | None = None
    compile_breakdown: CallBreakdown | None = None
    # The candidate's timing stopped early, clearly slower than its search's best so far (its
    # note says after how many batches): a loser's time, measured in the fewest batches
    raced: bool = False


@dataclass(frozen=True, slots=True)
class SpeedOfLight:
    """The roofline floor for a task and the fraction of it a candidate reaches.

    ``floor_ms = max(bytes / hbm_bandwidth, flops / matrix_rate)``; ``bound`` names the larger term;
    ``fraction = floor_ms / candidate_ms`` (1.0 is the speed of light).
    """

    flops: int
    bytes: int
    floor_ms: float
    bound: str
    fraction: float | None
    memory_gbps: float
    matrix_tflops: float
    ceilings: str


@dataclass(frozen=True, slots=True)
class PhaseTime:
    """Seconds an evaluation spent in one kind of step, as the judge timed it (starting the
    process, calibrating the clock, importing the solution, compiling in the warm-up, the
    checked calls, timing, the ablation...)."""

    name: str
    seconds: float


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """Where an evaluation ran and with which software."""

    kind: str
    name: str
    torch: str
    triton: str | None
    cuda: str | None = None
    interpreter: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the harness concluded about one candidate for one task.

    ``correct`` is True only when every trial matched, no guard check fired, and the status is
    ``correct``. ``flags`` are findings for a person to look at that do not change the status
    (a speedup past the speed of light, say); ``labels`` describe an accepted candidate
    (``hybrid``).
    """

    status: Status
    correct: bool
    message: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    norm_err: float | None = None
    trials: int = 0
    trials_passed: int = 0
    precision: Precision = Precision.FP32
    tolerance: Tolerance = field(default_factory=lambda: Precision.FP32.default_tolerance)
    timing: Timing = field(default_factory=Timing)
    sol: SpeedOfLight | None = None
    violations: tuple[Violation, ...] = ()
    flags: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    device: DeviceInfo | None = None
    task_sha256: str = ""
    solution_sha256: str = ""
    seed: int = 0
    duration_s: float = 0.0
    # where the candidate's process's part of ``duration_s`` went, step by step
    phases: tuple[PhaseTime, ...] = ()
    # the session's own work this evaluation waited for before its candidate ran (starting the
    # judge, measuring the baselines): the first evaluation of a session carries it, later
    # ones carry nothing
    setup: tuple[PhaseTime, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (enums as their string values)."""
        return to_jsonable(self)  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """Rebuild a verdict written by :meth:`to_dict`."""
        return from_jsonable(cls, data)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A self-contained ``ModelNew`` source file and where it came from.

    ``origin`` names the proposer (``user``, ``template``, ``llm``...); ``parent`` is the archive
    id of the candidate it was derived from, which makes trajectories; ``design`` and ``params``
    are the structure-stage choices and tuned parameters that produced it (empty for hand-written
    files).
    """

    source: str
    origin: str = "user"
    parent: int | None = None
    design: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        """Digest of the source: two candidates with the same text are the same candidate."""
        return sha256_text(self.source)


T = TypeVar("T")


def to_jsonable(value: Any) -> Any:
    """Recursively turn records into JSON-ready values (dataclasses, enums, tuples, mappings)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value


def from_jsonable(cls: type[T], data: Mapping[str, Any]) -> T:
    """Rebuild a record of type ``cls`` from :func:`to_jsonable` output (unknown keys ignored)."""
    import typing

    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            kwargs[f.name] = _coerce(hints[f.name], data[f.name])
    return cls(**kwargs)


def _coerce(hint: Any, value: Any) -> Any:
    import types
    import typing

    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(hint):
            if arg is type(None):
                continue
            try:
                return _coerce(arg, value)
            except (TypeError, ValueError):
                continue
        return value
    if origin is tuple:
        (item, *_) = typing.get_args(hint)
        return tuple(_coerce(item, v) for v in value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a mapping for {hint.__name__}, got {type(value).__name__}")
        return from_jsonable(hint, value)
    return value
