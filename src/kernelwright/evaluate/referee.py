"""The judge's conversation with one candidate's process: what is asked, in which order, and what
is concluded from the answers. Runs in the judge.

    start       precision policy, memory limit, in-process monitors (all before the import)
    import      the solution file (a failure is ``compile_error``)
    warm-up     a call per input shape on throwaway values: kernels compile now
    seal        no process can be started from here on
    runs        each trial and input variant: a model with the run's seed, input buffers the
                judge fills when the call starts, a call, its outputs read back and compared
    repeat      when asked (determinism): run 1's inputs twice more, outputs compared bit for bit
    timing      batches of calls on fresh inputs, timed by the judge's clock (see ``clock``)
    ablation    run 1 again with the candidate's kernels skipped, then made to raise
    observe     what the process saw of itself (may refuse, never vouch)

Each step has the evaluation's deadline; a process that stops answering is a timeout, one that
goes away has crashed, one whose answers are malformed is rejected. The result is a plain
report (the parent builds the verdict from it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kernelwright.evaluate import transport
from kernelwright.evaluate.channel import Channel, ChannelClosed, ChannelError, ChannelTimeout
from kernelwright.evaluate.correctness import compare_outputs, inputs_unchanged, precision_shortfall
from kernelwright.evaluate.launchers import checked as checked_signatures
from kernelwright.evaluate.reference import Expected, Reference

OUTPUTS = "outputs"  # the owner of the judge's mappings of the process's outputs


class Stop(Exception):
    """The conversation ends early; carries the failure to report."""

    def __init__(self, failure: dict[str, Any]) -> None:
        super().__init__(failure.get("message", ""))
        self.failure = failure


@dataclass(frozen=True, slots=True)
class Assignment:
    """What to do with one process.

    ``role``: ``candidate`` (everything) or ``baseline`` (the task's own model, trusted: import,
    warm-up and timing only). ``source_file``: the file to import inside the process's scratch.
    ``repeat``: after correct runs, call the candidate twice on run 1's inputs and compare.
    """

    role: str
    timing: bool
    guard: bool
    deadline: float
    memory_fraction: float | None = None
    source_file: str = "solution.py"
    repeat: bool = False  # run 0 twice more; the outputs must be bit-identical (determinism)
    # A search's best time so far (ms, this judge's clock): timing stops early for a candidate
    # clearly slower (clock.RACE_MARGIN)
    race_ms: float | None = None


class Referee:
    """Drives one process through the steps in the module docstring."""

    def __init__(
        self, channel: Channel, ref: Reference, job: Assignment, phase: Callable[[str], None]
    ) -> None:
        self.ch = channel
        self.ref = ref
        self.job = job
        self.phase_fn = phase
        self.phase = "start-up"
        # Seconds spent in each kind of step, in the order first reached (the verdict's
        # ``phases``: where an evaluation's time goes)
        self._spent: dict[str, float] = {}
        self._kind = "start-up"
        self._since = time.monotonic()
        self.device = ref.req.device
        self.overhead: Any = None  # the judge's fixed costs (clock.Overhead), before import
        # The judge's mappings of the process's memory (GPU): whose they are (a buffer set's
        # name, or OUTPUTS) and a weak reference to each mapped storage (see ``forget``)
        self._mapped: list[tuple[str, Any]] = []
        # The process's IPC events the judge has opened (their handles): opening one again
        # may cost less than a new one, so the clock counts only new ones
        self.events_seen: set[bytes] = set()
        self.report: dict[str, Any] = {
            "role": job.role,
            "failure": None,
            "runs": [],
            "observed": {},
            "timing": None,
            "ablation": {},
            "observations": {},
            "containment": {},
        }

    # -- the conversation --------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Every step; never raises (a failure is recorded in the report)."""
        try:
            self._steps()
        except Stop as stop:
            self.report["failure"] = stop.failure | {"phase": self.phase}
            if stop.failure.get("status") in ("compile_error", "runtime_error") and (
                    self.job.role == "candidate"):
                self._observe_after_failure()
        except transport.TransportError as exc:
            self.report["failure"] = {"status": "rejected", "stage": self.phase,
                                      "message": f"the process sent a malformed tensor: {exc}",
                                      "check": "protocol", "phase": self.phase}
        self.report["phase"] = self.phase
        self._tally(None)
        self.report["phases_s"] = [[kind, round(s, 4)] for kind, s in self._spent.items()]
        return self.report

    def _steps(self) -> None:
        job = self.job
        self._step("starting")
        self._ask("start", {"precision": self.ref.req.precision.value, "guard": job.guard,
                            "memory_fraction": job.memory_fraction,
                            "on_device": self.ref.on_device})
        if job.timing:
            from kernelwright.evaluate.clock import measure_overhead

            self._step("calibrating the clock")
            self.overhead = measure_overhead(self)
        self._step("importing the solution")
        self._ask("import", {"file": job.source_file})
        self._warm_up()
        if job.role == "candidate":
            sealed, _ = self._ask("seal", {})
            self.report["containment"] = sealed.get("containment") or self.report["containment"]
            self._checked_runs()
            if not self._runs_correct():
                self._observe()
                return
            if job.repeat:
                self._repeat()
        if job.timing:
            from kernelwright.evaluate.clock import time_batches

            self.report["timing"] = time_batches(self)
        if job.role == "candidate" and job.guard:
            self._ablation()
        if job.role == "candidate":
            self._observe()

    def _observe_after_failure(self) -> None:
        """The process failed but still answers: what it observed may still refuse it (reaching
        for a protected path and crashing on the refusal is no excuse)."""
        try:
            self._observe()
        except (Stop, transport.TransportError):
            pass

    def _observe(self) -> None:
        obs, _ = self._ask("observe", {})
        self.report["observations"] = clean_observations(obs.get("observations") or {})

    def _warm_up(self) -> None:
        """Compile for every input shape before the process is sealed."""
        seen: set[tuple[Any, ...]] = set()
        reported: Any = None
        indices = [0] if self.job.role == "baseline" else range(len(self.ref.runs))
        for i in indices:
            inputs = self.ref.warmup_inputs(i)
            key = tuple(_layout(v) if hasattr(v, "stride") else repr(v) for v in inputs)
            if key in seen:
                continue
            seen.add(key)
            self._step(f"warm-up {len(seen)} (compiling)", kind="warm-up (compiling)")
            # only the reply is kept: the outputs and inputs the judge maps go with the tuple
            reply = self._call("warmup", self.ref.runs[i].seed, inputs, observe=False,
                               launchers=True)[0]
            reported = reply.get("launchers")
            self._forget("warmup")
        # What the process says its kernels' argument types are, checked: for later spares'
        # warm-up (launchers.py), nothing the verdict depends on
        self.report["launchers"] = checked_signatures(reported)

    def _checked_runs(self) -> None:
        for i, run in enumerate(self.ref.runs):
            self._step(run.label, kind="checked calls")
            inputs, exp = self.ref.expected(i)
            reply, outputs, after = self._call(f"run{i}", run.seed, inputs, expect=exp)
            entry = self._compare(exp, outputs, seed=run.seed, inputs=inputs)
            entry.update(label=run.label, kind=run.kind)
            entry["mutation"] = self._mutation(inputs, exp, after)
            seen = clean_observations(reply.get("observed") or {})
            if i == 0:
                self.report["observed"] = seen
            else:
                first = self.report["observed"]
                first["answer_from_framework"] = sorted(
                    set(first.get("answer_from_framework") or [])
                    | set(seen.get("answer_from_framework") or []))
                first["numpy_conversions"] = int(first.get("numpy_conversions") or 0) + int(
                    seen.get("numpy_conversions") or 0)
                first["mode_intact"] = bool(first.get("mode_intact", True)) and bool(
                    seen.get("mode_intact", True))
                first["below_mode"] = sorted(set(first.get("below_mode") or [])
                                             | set(seen.get("below_mode") or []))
                if "peak_extra_bytes" in seen:
                    first["peak_extra_bytes"] = max(int(first.get("peak_extra_bytes") or 0),
                                                    seen["peak_extra_bytes"])
            self.report["runs"].append(entry)
            del outputs, after
            self._forget(f"run{i}")

    def _repeat(self) -> None:
        """Two more calls on run 1's inputs, each with a fresh model of the same seed; which
        outputs differ bit for bit between them (NaNs compare by their bits too)."""
        inputs, exp = self.ref.expected(0)
        seen: list[list[Any]] = []
        for k in range(2):
            self._step(f"repeat {k + 1} of 2 (determinism)", kind="determinism")
            _reply, outputs, _after = self._call(f"repeat{k}", self.ref.runs[0].seed, inputs,
                                                 expect=exp)
            seen.append([o.detach().clone() for o in outputs])
            del outputs, _after
            self._forget(f"repeat{k}")
        first, second = seen
        differ = [i for i, (a, b) in enumerate(zip(first, second, strict=False))
                  if not same_bits(a, b)]
        if len(first) != len(second):
            differ.append(min(len(first), len(second)))
        self.report["repeat"] = {"identical": not differ, "outputs": differ}

    def _ablation(self) -> None:
        inputs, exp = self.ref.expected(0)
        for mode in ("skip", "raise"):
            self._step(f"ablation ({mode} own kernels)", kind="ablation")
            reply, outputs, _after = self._call("ablation", self.ref.runs[0].seed, inputs,
                                                ablation=mode)
            self.report["ablation"][mode] = {
                "outcome": reply.get("ablated"),
                "compare": self._compare(exp, outputs, precision=False) if outputs else None,
            }
            del outputs, _after
            self._forget("ablation")
            if str(reply.get("ablated", "")).startswith("failed") and self.device == "cuda":
                break  # a CUDA error leaves the process's device unusable

    # -- a single call --------------------------------------------------------------------------

    def _call(
        self,
        name: str,
        seed: int,
        inputs: list[Any],
        *,
        expect: Expected | None = None,
        observe: bool = True,
        ablation: str | None = None,
        launchers: bool = False,
    ) -> tuple[dict[str, Any], list[Any], list[Any]]:
        """Build a model, write the inputs into its buffers, call it; the outputs (the judge's
        copy) and the inputs after the call (read from the buffers)."""
        self._ask("model", {"name": name, "seed": seed},
                  transport.pack(self.ref.init_inputs) if self.ref.init_inputs else b"")
        mapped = self.allocate(name, [inputs])
        self.fill(mapped, [inputs])
        shapes = [list(o.shape) for o in expect.outputs] if expect is not None else []
        reply, payload = self._ask("call", {"model": name, "buffers": name, "set": 0,
                                            "observe": observe, "ablation": ablation,
                                            "expect": shapes, "launchers": launchers})
        if ablation and reply.get("ablated") != "returned":
            return reply, [], []
        (outputs,) = self.read_calls(reply, payload, 1, [0])
        after = [m if m is not None else v for m, v in zip(mapped[0], inputs, strict=True)]
        return reply, self.take(outputs), after

    def allocate(self, name: str, sets: list[list[Any]]) -> list[list[Any]]:
        """Input buffers like ``sets[0]`` in the process, one group per set, and the judge's
        view of each (None for a non-tensor input). On a GPU the process allocates them and the
        judge maps them; on the CPU the judge creates them (sealed memfds) and hands them over."""
        import torch

        specs = [transport.spec_of(v) if isinstance(v, torch.Tensor) else {"value": v}
                 for v in sets[0]]
        if self.device != "cuda":
            mapped, fds = [], []
            for _ in sets:
                row: list[Any] = []
                for spec in specs:
                    if "value" in spec:
                        row.append(None)
                        continue
                    tensor, fd = transport.create_shared(spec)
                    row.append(tensor)
                    fds.append(fd)
                mapped.append(row)
            try:
                self._ask("buffers", {"name": name, "specs": specs, "count": len(sets)}, fds=fds)
            finally:
                for fd in fds:
                    os.close(fd)
            return mapped
        reply, _ = self._ask("buffers", {"name": name, "specs": specs, "count": len(sets)})
        handles = reply.get("handles")
        if not isinstance(handles, list) or len(handles) != len(sets):
            raise transport.TransportError("the buffers' descriptors do not match the request")
        gpu_mapped: list[list[Any]] = []
        for group, values in zip(handles, sets, strict=True):
            if not isinstance(group, list) or len(group) != len(values):
                raise transport.TransportError("the buffers' descriptors do not match")
            gpu_row: list[Any] = []
            for desc, v in zip(group, values, strict=True):
                if not isinstance(v, torch.Tensor) or not v.numel():
                    gpu_row.append(None)
                    continue
                t = self.open(desc, owner=name)
                if t.shape != v.shape or t.dtype != v.dtype or t.stride() != v.stride():
                    raise transport.TransportError("a buffer is not shaped as requested")
                gpu_row.append(t)
            gpu_mapped.append(gpu_row)
        return gpu_mapped

    def fill(self, mapped: list[list[Any]], sets: list[list[Any]],
             which: list[int] | None = None, sync: bool = True) -> None:
        """Write ``sets`` into the process's buffers ``which`` (default: all, in order); no
        code of the process runs while the judge writes (``sync=False``: the caller waits for
        the device before the process runs)."""
        import torch

        which = which if which is not None else list(range(len(sets)))
        for k, values in zip(which, sets, strict=True):
            for buf, v in zip(mapped[k], values, strict=True):
                if buf is not None:
                    buf.copy_(v)
        if sync and self.device == "cuda":
            torch.cuda.synchronize()  # written before the process reads them

    def read_calls(self, reply: dict[str, Any], payload: bytes, count: int,
                   which: list[int], opened: transport.Opened | None = None,
                   ) -> list[list[Any]]:
        """The outputs of calls ``which`` among the ``count`` the reply describes (mapped on a
        GPU, deserialised on the CPU), validated as tensors on the task's device; ``opened``
        gains the allocations mapped for them (see :func:`transport.open_cuda`)."""
        import torch

        if self.device == "cuda":
            calls = reply.get("calls")
            if not isinstance(calls, list) or len(calls) != count:
                raise transport.TransportError("the outputs described do not match the calls")
            chosen = []
            for i in which:
                if not isinstance(calls[i], list):
                    raise transport.TransportError("a call's outputs must be a list")
                chosen.append([self.open(d, opened) for d in calls[i]])
        else:
            data = transport.unpack(payload)
            if not isinstance(data, list) or len(data) != count:
                raise transport.TransportError("the outputs sent do not match the calls")
            chosen = [data[i] for i in which]
        for outputs in chosen:
            if not isinstance(outputs, list) or not all(
                    type(o) is torch.Tensor and o.device.type == self.device for o in outputs):
                raise transport.TransportError(
                    f"outputs must be plain tensors on the {self.device}")
        return chosen

    def open(self, desc: Any, opened: transport.Opened | None = None,
             owner: str = "") -> Any:
        """A tensor of the process's memory, mapped into the judge (GPU): of the buffer set
        ``owner``, or an output (see ``forget``)."""
        import torch
        from torch.multiprocessing.reductions import StorageWeakRef

        if isinstance(desc, dict) and desc.get("empty"):
            shape = desc.get("shape")
            if desc.get("dtype") not in transport.DTYPES or not isinstance(shape, list):
                raise transport.TransportError("malformed empty tensor")
            return torch.empty(shape, dtype=getattr(torch, desc["dtype"]), device="cuda")
        tensor = transport.open_cuda(desc, opened)
        self._mapped.append((owner or OUTPUTS, StorageWeakRef(tensor.untyped_storage())))
        return tensor

    def take(self, outputs: list[Any]) -> list[Any]:
        """The judge's own copy of the outputs, when the memory plan allows one."""
        import torch

        plan = self.ref.plan
        if self.device == "cuda" and (plan is None or plan.copy_outputs):
            outputs = [o.clone() for o in outputs]
            torch.cuda.synchronize()
        return outputs

    def _compare(self, exp: Expected, outputs: list[Any], precision: bool = True,
                 seed: int | None = None, inputs: list[Any] | None = None) -> dict[str, Any]:
        """Compare with the reference; with ``seed`` and ``inputs`` (a checked run's), elements
        outside the tolerance, or a normalised error past its bound, are arbitrated by the
        float64 answer (``correctness``), run here when the policy's checks did not already
        (only on such a failure)."""
        tol = self.ref.req.tolerance
        # a user's --atol applies exactly: no arbitration then (widen_atol is off)
        arbitrate = seed is not None and inputs is not None and self.ref.req.widen_atol
        entry = compare_outputs(exp.outputs, outputs, tol, exp.ref_error,
                                exp.exact if arbitrate else None)
        if (arbitrate and seed is not None and inputs is not None and not entry["ok"]
                and entry["differ"] and exp.exact is None):
            exact = self.ref.exact_outputs(seed, inputs)
            if exact is not None:
                entry = compare_outputs(exp.outputs, outputs, tol, exp.ref_error, exact)
        if precision and entry["ok"]:
            entry["precision"] = precision_shortfall(outputs, exp.exact, exp.outputs)
        return entry

    def _mutation(self, inputs: list[Any], exp: Expected, after: list[Any]) -> str:
        if exp.inputs_after is None:
            return inputs_unchanged(inputs, after)
        same = compare_outputs(exp.inputs_after, after, self.ref.req.tolerance)
        if same["ok"]:
            return ""
        return ("the reference mutates its inputs and the candidate's mutated inputs differ: "
                + str(same["message"]))

    def _runs_correct(self) -> bool:
        runs = [r for r in self.report["runs"] if r.get("kind") == "trial"]
        return bool(runs) and all(r.get("ok") and not r.get("mutation") for r in runs)

    def _forget(self, name: str) -> None:
        self.forget(models=[name], buffers=[name])

    def forget(self, models: list[str] | tuple[str, ...] = (),
               buffers: list[str] | tuple[str, ...] = ()) -> None:
        """The process drops ``models`` and the buffer sets ``buffers`` with its outputs, and
        gives its free memory back to the device. The judge's mappings of that memory must be
        closed first: a process freeing memory another process still maps is undefined
        behaviour in CUDA (the judge's next mapping, or its context, may go wrong), so a
        mapping still open here is a defect of the harness, raised as one."""
        dropped = {OUTPUTS, *buffers}
        self._mapped = [(owner, ref) for owner, ref in self._mapped if not ref.expired()]
        held = sorted({owner for owner, _ in self._mapped if owner in dropped})
        if held:
            raise RuntimeError(
                f"the judge still maps the process's {', '.join(held)} as it is asked to free "
                "them (a harness defect: the mappings must be closed first)")
        self._ask("forget", {"models": list(models), "buffers": list(buffers)})

    # -- messages ----------------------------------------------------------------------------

    def ask(self, op: str, header: dict[str, Any], payload: bytes = b"",
            fds: list[int] | None = None, spin_s: float = 0.0) -> tuple[dict[str, Any], bytes]:
        """Send a command and return the process's successful answer (else Stop); ``spin_s``:
        wait for it without sleeping for up to that long (see ``Channel.recv``)."""
        return self._ask(op, header, payload, fds, spin_s)

    def _ask(self, op: str, header: dict[str, Any], payload: bytes = b"",
             fds: list[int] | None = None, spin_s: float = 0.0) -> tuple[dict[str, Any], bytes]:
        try:
            self.ch.send({"op": op} | header, payload, fds or ())
        except ChannelError:
            raise Stop(self._lost()) from None
        reply, data = self._recv(spin_s)
        if reply.get("ok") is not True:
            raise Stop(_failure_from(reply))
        return reply, data

    def _recv(self, spin_s: float = 0.0) -> tuple[dict[str, Any], bytes]:
        try:
            return self.ch.recv(self.job.deadline, max_payload=_max_payload(self.ref),
                                spin_s=spin_s)
        except ChannelTimeout:
            raise Stop({"status": "timeout", "stage": self.phase,
                        "message": f"no answer in time during {self.phase}"}) from None
        except ChannelClosed:
            raise Stop(self._lost()) from None
        except ChannelError as exc:
            raise Stop({"status": "rejected", "stage": self.phase, "check": "protocol",
                        "message": f"the process broke the harness's protocol: {exc}"}) from None

    def _lost(self) -> dict[str, Any]:
        return {"status": "crashed", "stage": self.phase,
                "message": f"the process ended during {self.phase}"}

    def _step(self, text: str, kind: str | None = None) -> None:
        """Enter a step: ``text`` for progress and error messages, ``kind`` (default: the text)
        the entry of ``phases_s`` its seconds count to."""
        self._tally(kind or text)
        self.phase = text
        self.phase_fn(f"{self.job.role}: {text}")

    def _tally(self, kind: str | None) -> None:
        now = time.monotonic()
        self._spent[self._kind] = self._spent.get(self._kind, 0.0) + now - self._since
        self._since = now
        if kind is not None:
            self._kind = kind

    def step(self, text: str, kind: str = "timing") -> None:
        """Report a phase (used by the clock, whose steps count as timing or a part of it)."""
        self._step(text, kind=kind)

    def count_as(self, kind: str) -> None:
        """Count the seconds from now to ``kind`` of ``phases_s`` (the step's text stays)."""
        self._tally(kind)

    @property
    def deadline(self) -> float:
        """When the whole evaluation must be over (``time.monotonic``)."""
        return self.job.deadline

    def time_left(self) -> float:
        """Seconds until the deadline."""
        return self.job.deadline - time.monotonic()


_STR_LIST = ("identity_after_import", "identity_changed", "new_threads", "audit_denied",
             "subprocesses", "answer_from_framework", "thread_starts", "process_attempts",
             "below_mode", "new_os_thread_names")
_INT_LIST = ("new_os_threads",)
_INT = ("framework_work", "vendor_work", "numpy_conversions", "launches", "peak_extra_bytes",
        "compiled_frames")
_BOOL = ("mode_intact",)
_DICT = ("op_counts", "policy_before", "policy_after", "launches", "launch_names",
         "launch_programs")


def same_bits(a: Any, b: Any) -> bool:
    """Whether two tensors hold the same bytes (shape and dtype included)."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(torch.equal(a.contiguous().reshape(-1).view(torch.uint8),
                            b.contiguous().reshape(-1).view(torch.uint8)))


def clean_observations(obs: Any) -> dict[str, Any]:
    """What a process says it observed, type-checked field by field (TransportError if any field
    is malformed: the process tampered with its own reporting)."""
    if not isinstance(obs, dict):
        raise transport.TransportError("observations must be an object")
    clean: dict[str, Any] = {}
    for key, value in obs.items():
        ok = (
            (key in _STR_LIST and isinstance(value, list)
             and all(isinstance(v, str) for v in value))
            or (key in _INT_LIST and isinstance(value, list)
                and all(isinstance(v, int) for v in value))
            or (key in _INT and isinstance(value, int) and not isinstance(value, bool))
            or (key in _BOOL and isinstance(value, bool))
            or (key in _DICT and isinstance(value, dict) and all(
                isinstance(k, str) and isinstance(v, int | float | str | bool)
                for k, v in value.items()))
        )
        if not ok:
            raise transport.TransportError(f"malformed observation {key!r}")
        clean[key] = value
    return clean


def _failure_from(reply: dict[str, Any]) -> dict[str, Any]:
    status = reply.get("status")
    if status not in ("compile_error", "runtime_error", "rejected"):
        status = "runtime_error"
    return {
        "status": status,
        "stage": str(reply.get("stage", ""))[:100],
        "message": str(reply.get("message", "the process reported a failure"))[:1000],
        "detail": str(reply.get("detail", ""))[-4000:],
    }


def _max_payload(ref: Reference) -> int:
    """Payloads from a process on the CPU carry its outputs: a few times a single call's bytes."""
    fp = ref.footprint
    if fp is None:
        return 1 << 32
    return int(8 * (fp.in_b + fp.out_b) + (64 << 20))


def _layout(t: Any) -> tuple[Any, ...]:
    """What a compiled kernel may be specialised on: shape, dtype, strides and offset."""
    return (tuple(t.shape), str(t.dtype), tuple(t.stride()), t.storage_offset())
