"""The candidate's process: confined first, then driven call by call by the judge.

    python -m kernelwright.evaluate.candidate_worker SPEC_JSON

Start-up, before any candidate code exists in the process:

    confine      Landlock, seccomp, rlimits (:mod:`~kernelwright.evaluate.containment`) while
                 the process is still single-threaded
    warm up      imports (torch, Triton), one dispatch under the observing mode, the CUDA context
    ready        one frame on the channel; then it serves the judge's commands until ``exit``

Everything after ``import`` runs next to the candidate's code, so nothing here is trusted: the
judge writes the inputs into this process's buffers when a call starts, reads the outputs when
it returns, and keeps its own clock. What this process reports about itself (observations,
CUDA-event times) may refuse a candidate, never vouch for one; only before the import does the
judge take its word (``describe_cost``, a calibration of the judge's clock).

Commands (JSON header, optional payload): ``ping`` (the executor's, before it hands a spare
out), ``start``, ``describe_cost``, ``reveal_cost``, ``import``, ``model``, ``buffers``,
``call``, ``prepare``, ``batch``, ``release``, ``forget``, ``seal``, ``observe``, ``exit``; each
answered with ``{"ok": true, ...}`` or a failure ``{"ok": false, "status", "stage", "message"}``.
"""

from __future__ import annotations

import gc
import json
import math
import os
import sys
from typing import Any

from kernelwright.evaluate import containment, launchers
from kernelwright.evaluate.batch_report import FinishedBatch, PreparedBatch, launched_since
from kernelwright.evaluate.channel import Channel, ChannelError

# A spare process may wait this long for its candidate before giving up.
IDLE_TIMEOUT_S = 3600.0
# After ``prepare``, how long the process polls for the batch's message before sleeping on it
BATCH_SPIN_S = 0.25
# Device clock cycles the reveal's calibration keeps the device busy while its copies are
# issued (about a millisecond at 1.5-2 GHz: far longer than issuing them takes)
REVEAL_QUEUE_CYCLES = 2_000_000


class CandidateFailure(Exception):
    """The candidate's code failed at a stage; carries the status to report."""

    def __init__(self, status: str, stage: str, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.reply = {"ok": False, "status": status, "stage": stage, "message": message,
                      "detail": detail}


def main(argv: list[str]) -> None:
    """Entry point; see the module docstring."""
    spec = json.loads(argv[0])
    _die_with_parent()
    in_namespace = bool(spec.get("pid_namespace")) and containment.enter_pid_namespace()
    report = containment.enter(
        containment.Sandbox(
            scratch=spec["scratch"],
            read_roots=tuple(spec.get("read_roots", ())),
            cpu_seconds=int(spec.get("cpu_seconds", 0)),
            data_bytes=int(spec.get("data_bytes", 0)),
        )
    )
    report.pid_namespace = in_namespace
    os.chdir(spec["scratch"])
    sys.path[0] = spec["scratch"]
    channel = Channel.from_fd(int(spec["channel_fd"]))
    warm_up(spec["device"], launchers.checked(spec.get("launchers")))
    channel.send({"ok": True, "ready": True, "containment": report.to_dict()})
    Runner(channel, spec["device"], report).serve()


def warm_up(device: str, signatures: list[launchers.Signature] | None = None) -> None:
    """What depends on neither the candidate nor its request: imports, the CUDA context,
    Triton's first compile and the launchers of ``signatures`` (``triton_warm``)."""
    import importlib
    from collections import Counter

    for name in ("torch", "torch.utils._python_dispatch", "torch.utils.cpp_extension",
                 "torch.profiler", "triton", "triton.language", "triton.testing"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    import torch

    from kernelwright.evaluate.guard.observer import ForwardObserver

    if device == "cpu":
        torch.set_num_threads(1)  # timing on a shared CPU: no oversubscription
    observer = ForwardObserver(Counter())
    with torch.no_grad(), observer.profiled(), observer:
        # The first dispatch under the mode and the profiler's first start (its thread) are
        # paid here, before the candidate is imported.
        torch.ones(1).add_(1)
    if device == "cuda":
        torch.cuda.synchronize()
        try:
            from kernelwright.evaluate import triton_warm

            triton_warm.warm(torch, signatures or [])
        except Exception:  # noqa: BLE001 - only time is at stake: a candidate that uses
            pass  # Triton meets the same failure in its own first compile, and it is reported


def _launcher_signatures(module: Any) -> list[list[str]]:
    """The argument types of the Triton kernels the solution's module compiled so far (its
    ``@triton.jit`` functions' compiled kernels, as Triton's launchers take them): a report for
    later processes' warm-up (:mod:`~kernelwright.evaluate.launchers`), nothing the verdict
    reads."""
    found: list[list[str]] = []
    try:
        for value in list(vars(module).values()) if module is not None else []:
            caches = getattr(value, "device_caches", None)
            if not isinstance(caches, dict):
                continue
            for cache in list(caches.values()):
                kernels = cache[0] if isinstance(cache, tuple) and cache else {}
                for kernel in list(kernels.values()) if isinstance(kernels, dict) else []:
                    signature = getattr(getattr(kernel, "src", None), "signature", None)
                    if isinstance(signature, dict):
                        types = list(signature.values())
                        if all(isinstance(t, str) for t in types) and types not in found:
                            found.append(types)
    except Exception:  # noqa: BLE001 - an object of the solution's that answers oddly: the
        pass  # report is shorter, nothing else depends on it
    return found


class Runner:
    """Serves the judge's commands; see the module docstring."""

    def __init__(self, channel: Channel, device: str, report: containment.ContainmentReport):
        self.ch = channel
        self.device = device
        self.containment = report
        self.module: Any = None
        self.models: dict[str, Any] = {}
        self.buffers: dict[str, list[list[Any]]] = {}
        # Aliases of the buffers with version counters of their own: revealing a region writes
        # through them, so the inputs a call sees keep the version a judge's write leaves
        # (a timed call's input must not tell it apart from a checked call's).
        self.writers: dict[str, list[list[Any]]] = {}
        self.kept: list[Any] = []  # outputs the judge has not read yet
        self.batch_outputs: list[Any] = []
        self.prepared: PreparedBatch | None = None  # the next timed batch, set up off the clock
        self.finished: FinishedBatch | None = None  # the last one, reported at its release
        self.counters: list[Any] = []  # CUDA share counts of described outputs, given back later
        self.obs: dict[str, Any] = {}
        self.on_device = False
        self.sealed = False
        self.state: Any = None

    def serve(self) -> None:
        """Answer commands until ``exit`` or the judge goes away."""
        spin_s = 0.0
        while True:
            try:
                header, payload = self.ch.recv(deadline=None, max_payload=1 << 40,
                                               spin_s=spin_s)
            except ChannelError:
                return
            op = header.get("op")
            handler = getattr(self, f"do_{op}", None) if isinstance(op, str) else None
            if op == "exit" or handler is None:
                return
            out_payload = b""
            try:
                reply, out_payload = handler(header, payload)
            except CandidateFailure as failure:
                reply = failure.reply
            except BaseException as exc:  # the candidate's code raised through the harness
                reply = _failure_reply(exc, str(op))
            try:
                self.ch.send(reply, out_payload)
            except ChannelError:
                return
            # A prepared batch's message comes once the judge has written its inputs, and its
            # clock runs from then: wait for it without sleeping (see Channel.recv)
            spin_s = BATCH_SPIN_S if op == "prepare" and self.device == "cuda" else 0.0

    # -- set-up ------------------------------------------------------------------------------

    def do_ping(self, _h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        return {"ok": True}, b""

    def do_start(self, h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        import torch

        from kernelwright.evaluate.guard.integrity import IdentitySnapshot, live_threads, os_threads
        from kernelwright.evaluate.guard.monitor import LaunchMonitor
        from kernelwright.evaluate.guard.sandbox import install_audit_hook
        from kernelwright.evaluate.precision import apply_policy, policy_flags
        from kernelwright.records import Precision

        self.precision = Precision(h["precision"])
        self.on_device = bool(h.get("on_device"))  # how the task's models are built
        apply_policy(self.precision)
        fraction = h.get("memory_fraction")
        if self.device == "cuda" and fraction:
            torch.cuda.set_per_process_memory_fraction(float(fraction))
        self.monitor = LaunchMonitor()
        self.monitor.install()
        if self.device == "cpu":
            from kernelwright.evaluate.interpreter import prepare_interpreter

            prepare_interpreter()
        self.state = {
            "identities": IdentitySnapshot.take(extra=self.monitor.patched),
            "threads": live_threads(),
            "os_threads": os_threads(),
            "policy": policy_flags(),
            "audit": install_audit_hook(()) if h.get("guard", True) else None,
        }
        return {"ok": True, "pid": os.getpid()}, b""

    def do_import(self, h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        import importlib.util
        import traceback

        path = os.path.join(os.getcwd(), str(h.get("file", "solution.py")))
        name = "kernelwright_candidate"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise CandidateFailure("compile_error", "import", f"cannot import {h.get('file')}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:
            raise CandidateFailure(
                "compile_error", "import",
                f"importing the solution raised {type(exc).__name__}: {_first_line(exc)}",
                traceback.format_exc(limit=12)[-4000:],
            ) from None
        self.obs["identity_after_import"] = self.state["identities"].changed()
        if getattr(module, "ModelNew", None) is None:
            raise CandidateFailure(
                "compile_error", "import",
                "the solution defines no ModelNew; a KernelBench solution needs "
                "`class ModelNew(nn.Module)` with the same constructor as Model",
            )
        self.module = module
        return {"ok": True}, b""

    def do_model(self, h: dict[str, Any], p: bytes) -> tuple[dict[str, Any], bytes]:
        from kernelwright.evaluate import transport
        from kernelwright.evaluate.runs import build_model

        init = transport.unpack(p) if p else []
        cls = self.module.ModelNew
        self.models[str(h["name"])] = _stage(
            "construct", lambda: build_model(cls, list(init), int(h["seed"]), self.device,
                                             self.precision, on_device=self.on_device)
        )
        _reseed()  # what runs next learns nothing from the weights' seed
        return {"ok": True}, b""

    def do_buffers(self, h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        """Input buffers like ``specs``, ``count`` times. On a GPU this process allocates them
        and describes them to the judge; on the CPU the judge sends their shared memory (one
        descriptor per tensor), which this process maps."""
        import torch

        from kernelwright.evaluate import transport

        sets: list[list[Any]] = []
        shared = self.device != "cuda"
        for _ in range(int(h["count"])):
            items: list[Any] = []
            for spec in h["specs"]:
                if "value" in spec:
                    items.append(spec["value"])
                elif shared:
                    items.append(transport.map_shared(self.ch.take_fds(1)[0], spec))
                else:
                    items.append(torch.empty_strided(
                        spec["shape"], spec["stride"], dtype=getattr(torch, spec["dtype"]),
                        device=self.device))
            sets.append(items)
        self.buffers[str(h["name"])] = sets
        self.writers[str(h["name"])] = [[_alias(t) for t in items] for items in sets]
        if shared:
            return {"ok": True}, b""
        handles = [[transport.describe_cuda(t) if isinstance(t, torch.Tensor) and t.numel()
                    else None for t in items] for items in sets]
        return {"ok": True, "handles": handles}, b""

    # -- calls -------------------------------------------------------------------------------

    def do_call(self, h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        """One checked call: forward on buffer set ``set``, outputs handed to the judge."""
        from collections import Counter

        import torch

        from kernelwright.evaluate.guard.monitor import AblatedLaunch
        from kernelwright.evaluate.guard.observer import ForwardObserver

        self._drop_outputs()
        model = self.models[str(h["model"])]
        inputs = _fresh_views(self.buffers[str(h["buffers"])][int(h["set"])])
        ablation = h.get("ablation")
        observer = ForwardObserver(Counter(), watch=[tuple(s) for s in h.get("expect", [])])
        launches_before = dict(self.monitor.counts)
        programs_before = dict(self.monitor.programs)
        before = _allocated(self.device)
        if ablation:
            self.monitor.set_mode(ablation)
        try:
            if h.get("observe", True):
                self.monitor.watcher = observer
                with torch.no_grad(), observer.profiled(), observer.numpy_guard(), observer:
                    out = model(*inputs)
                    gc.collect()  # finalizers run now, inside the observed call
            else:
                with torch.no_grad():
                    out = model(*inputs)
        except AblatedLaunch:
            return {"ok": True, "ablated": "raised"}, b""
        except BaseException as exc:
            if ablation:
                return {"ok": True, "ablated": f"failed: {type(exc).__name__}"}, b""
            raise CandidateFailure(*_failure_of(exc, "forward")) from None
        finally:
            self.monitor.set_mode("count")
            self.monitor.watcher = None
        outputs = _checked_outputs(out, self.device)
        _sync(self.device)
        observed = (observer.summary(outputs) if h.get("observe", True) else {}) | {
            "launches": sum(self.monitor.counts.values()) - sum(launches_before.values()),
            "launch_names": launched_since(self.monitor.counts, launches_before),
            "launch_programs": launched_since(self.monitor.programs, programs_before),
        }
        if before is not None:  # the peak above what was allocated, less the outputs
            out_bytes = sum(o.untyped_storage().nbytes() for o in outputs)
            observed["peak_extra_bytes"] = max(
                0, torch.cuda.max_memory_allocated() - before - out_bytes)
        self.kept = outputs
        reply = {"ok": True, "observed": observed, "ablated": "returned" if ablation else None}
        if h.get("launchers"):
            reply["launchers"] = _launcher_signatures(self.module)
        extra, payload = self._outputs_reply([outputs])
        return reply | extra, payload

    def do_prepare(self, h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        """Before the judge's clock starts: what the next ``batch`` needs (its model, buffer
        sets and staging, a pair of CUDA events a call, created now) and the counts its report
        is taken against, so that the batch itself only issues its calls, notes its launches
        and describes their outputs: the rest of this process's bookkeeping is off the clock."""
        self._drop_outputs()
        order = [int(k) for k in h["sets"]]
        name = str(h["buffers"])
        self.prepared = PreparedBatch.make(
            order, self.models[str(h["model"])] if order else None,
            self.buffers[name] if order else [], self.writers[name] if order else [],
            self.buffers[str(h["reveal"])] if order else [], self.device,
            dict(self.monitor.counts), dict(self.monitor.programs))
        self.finished = None
        return {"ok": True}, b""

    def do_batch(self, h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        """Timed calls back to back on the prepared sets; then every call's outputs, described
        (the judge decides which it reads only after this reply). What the process saw of the
        batch waits for ``release``, after the judge's clock has stopped."""
        import torch

        from kernelwright.evaluate import reveal

        received = _clock()
        prepared, self.prepared = self.prepared, None
        if prepared is None:
            raise ValueError("a batch must be prepared first")
        places = h.get("places")
        if not isinstance(places, list) or len(places) != len(prepared.order):
            raise ValueError("the regions to reveal do not match the calls")
        model, sets, writers, staging = (prepared.model, prepared.sets, prepared.writers,
                                         prepared.staging)
        times: list[float] = []
        forward_s = 0.0  # the host's time inside the forwards
        prelude_s = 0.0  # and in this process's own steps before each (reveal, views, event)
        gc.disable()
        try:
            with torch.no_grad():
                issued = _clock()
                if self.device == "cuda":
                    for (start, end), k, spots in zip(prepared.events, prepared.order, places,
                                                      strict=True):
                        # The call's true inputs exist from here on (stream order), not before.
                        before = _clock()
                        reveal.apply(writers[k], staging[k], spots)
                        args = _fresh_views(sets[k])
                        start.record()
                        entered = _clock()
                        prelude_s += entered - before
                        out = _stage("timing", lambda a=args: model(*a))
                        forward_s += _clock() - entered
                        self.batch_outputs.append(out)
                        end.record()
                    finished_issuing = _clock()
                    torch.cuda.synchronize()
                else:
                    for k, spots in zip(prepared.order, places, strict=True):
                        reveal.apply(writers[k], staging[k], spots)
                        args = _fresh_views(sets[k])
                        t0 = _clock()
                        self.batch_outputs.append(_stage("timing", lambda a=args: model(*a)))
                        times.append((_clock() - t0) * 1e3)
                    finished_issuing = _clock()
                idle = _clock()
        finally:
            gc.enable()
        # The batch's launches end here: a launch after the reply (a thread finishing the work
        # once the judge has stopped its clock) is not one of its timed calls'
        launched = dict(self.monitor.counts), dict(self.monitor.programs)
        outputs = [_checked_outputs(out, self.device) for out in self.batch_outputs]
        self.batch_outputs = outputs
        reply, payload = self._outputs_reply(outputs)
        self.finished = FinishedBatch(prepared, times, received, issued, finished_issuing,
                                      forward_s, prelude_s, idle, _clock(), *launched)
        return {"ok": True} | reply, payload

    def do_release(self, _h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        """After the judge's clock has stopped: the last batch's report of itself (its calls'
        events, host times, launches and allocator counts), then its outputs go back."""
        finished, self.finished = self.finished, None
        report = finished.report(self.device) if finished is not None else {}
        self._drop_outputs()
        return {"ok": True} | report, b""

    def do_describe_cost(self, h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        """Calibration, before the solution is imported (so this process's own clock is still
        the harness's): outputs of ``calls`` calls, each with outputs of the sizes ``bytes``
        (a timed call's), in the cheapest arrangement a solution could return them (views of
        one storage, a call's outputs overlapping), so the judge never subtracts more than a
        batch's outputs cost it. The least time describing one output takes, already shared
        once; the views stay (described in the reply) for the judge to time its reads of them."""
        import torch

        from kernelwright.evaluate import transport

        if self.module is not None:
            raise RuntimeError("the judge asked for a calibration after the import")
        calls = max(1, min(int(h["calls"]), 64))
        sizes = [max(1, int(b)) for b in h["bytes"]][:64] or [4096]
        self._drop_outputs()
        span = -(-max(sizes) // 512) * 512  # each call's outputs start 512-byte aligned
        base = torch.empty(calls * span, dtype=torch.uint8, device=self.device)
        grouped = [[base[c * span:c * span + b] for b in sizes] for c in range(calls)]
        self.kept = [t for outputs in grouped for t in outputs]
        torch.cuda.synchronize()
        described = [transport.describe_cuda(t, self.counters) for t in self.kept]
        best = math.inf
        for _ in range(int(h.get("rounds", 3))):
            t0 = _clock()
            described = [transport.describe_cuda(t, self.counters) for t in self.kept]
            best = min(best, (_clock() - t0) * 1e3 / len(self.kept))
        per_call = len(sizes)
        return {"ok": True, "describe_ms": best,
                "calls": [described[c * per_call:(c + 1) * per_call] for c in range(calls)]}, b""

    def do_reveal_cost(self, h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        """Calibration, before the solution is imported: the least revealing a call's
        held-back regions can add to a batch (buffer set 0 of ``buffers``). In a batch the copies
        overlap either the host's work or the device's, so what they add is at least the
        smaller of their host time and their device time; the judge subtracts that. The device
        time is taken with the copies queued behind a wait on the device, so that they run back
        to back as in a device-bound batch: timed on an idle device, the events also hold the
        host's launches between them (on an H100 that doubled a 4096^2 product's reveal, and
        a torch.compile baseline read 10% faster than its own events)."""
        from kernelwright.evaluate import reveal

        if self.module is not None:
            raise RuntimeError("the judge asked for a calibration after the import")
        name = str(h["buffers"])
        inputs, stages = self.writers[name][0], self.buffers[f"{name}:reveal"][0]
        host = device = math.inf
        for _ in range(int(h.get("rounds", 5))):
            _sync(self.device)
            t0 = _clock()
            reveal.apply(inputs, stages, h["places"])
            host = min(host, (_clock() - t0) * 1e3)  # on the CPU the copies themselves
            if self.device == "cuda":
                import torch

                start, end = (torch.cuda.Event(enable_timing=True),
                              torch.cuda.Event(enable_timing=True))
                torch.cuda.synchronize()
                torch.cuda._sleep(REVEAL_QUEUE_CYCLES)  # the device busy while they are issued
                start.record()
                reveal.apply(inputs, stages, h["places"])
                end.record()
                end.synchronize()
                device = min(device, start.elapsed_time(end))
        return {"ok": True, "reveal_ms": min(host, device)}, b""

    def do_forget(self, h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        """Drop models and buffers the judge no longer needs (their memory goes back)."""
        for name in h.get("models", []):
            self.models.pop(str(name), None)
        for name in h.get("buffers", []):
            self.buffers.pop(str(name), None)
            self.writers.pop(str(name), None)
        self._drop_outputs()
        if self.device == "cuda":
            import torch

            torch.cuda.empty_cache()
        return {"ok": True}, b""

    # -- containment and observations --------------------------------------------------------

    def do_seal(self, _h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        from kernelwright.evaluate.guard.integrity import os_threads

        containment.seal(self.containment)
        # What exists now (torch, Triton, the candidate's module and compiled kernels) is left
        # out of every later collection: the full collection that ends each observed call (so
        # finalizers run inside it) then scans only what the calls made, milliseconds instead
        # of a tenth of a second. Garbage goes first (frozen, it would never be collected); the
        # models of the calls are all made after this. Timed and checked calls see the same
        # collector state.
        gc.collect()
        gc.freeze()
        # Native threads that libraries start on first use (thread pools, the driver's) are in
        # place after the warm-up; a Python thread the candidate starts, then or later, is not
        # forgiven (it is compared with the threads alive before the import).
        self.state["os_threads"] = os_threads()
        self.sealed = True
        if self.state["audit"] is not None:
            self.state["audit"].sealed = True
        return {"ok": True, "containment": self.containment.to_dict()}, b""

    def do_observe(self, _h: dict[str, Any], _p: bytes) -> tuple[dict[str, Any], bytes]:
        from kernelwright.evaluate.guard.integrity import live_threads, os_thread_names, os_threads
        from kernelwright.evaluate.precision import policy_flags

        st = self.state
        audit = st["audit"]
        before_py = st["threads"]
        obs = dict(self.obs)
        # Native threads are compared from the seal on: before it (a candidate that failed to
        # import or compile), libraries may still be starting theirs.
        new_os = sorted(set(os_threads()) - set(st["os_threads"])) if self.sealed else []
        try:
            after = policy_flags()
        except Exception as exc:  # flags the candidate left in a state that can't be read back
            after = {"unreadable": f"{type(exc).__name__}: {exc}"[:200]}
        obs.update(
            identity_changed=st["identities"].changed(),
            new_threads=sorted(n for i, n in live_threads().items() if i not in before_py),
            new_os_threads=new_os,
            new_os_thread_names=os_thread_names(new_os),
            policy_before=st["policy"],
            policy_after=after,
            launches=dict(self.monitor.counts),
            audit_denied=list(audit.denied) if audit else [],
            subprocesses=list(audit.subprocesses) if audit else [],
            thread_starts=list(audit.thread_starts) if audit else [],
            process_attempts=list(audit.process_attempts) if audit else [],
            compiled_frames=_compiled_frames(),
        )
        return {"ok": True, "observations": obs}, b""

    # -- helpers -----------------------------------------------------------------------------

    def _outputs_reply(self, calls: list[list[Any]]) -> tuple[dict[str, Any], bytes]:
        """The outputs of each call: described (GPU), or serialised (CPU) as plain tensors."""
        if self.device == "cuda":
            return {"calls": [self._describe(outputs) for outputs in calls]}, b""
        import torch

        from kernelwright.evaluate import transport

        plain = [[o.detach() if type(o) is torch.nn.Parameter else o for o in outputs]
                 for outputs in calls]
        return {}, transport.pack(plain)

    def _drop_outputs(self) -> None:
        """Forget the outputs handed to the judge, their share counts given back first."""
        from kernelwright.evaluate import transport

        if self.counters:
            transport.give_back(self.counters)
        self.kept = []
        self.batch_outputs = []

    def _describe(self, outputs: list[Any]) -> list[dict[str, Any]]:
        from kernelwright.evaluate import transport

        return [
            transport.describe_cuda(o, self.counters) if o.numel() else
            {"empty": True, **transport.spec_of(o)} for o in outputs
        ]


def _allocated(device: str) -> int | None:
    """Bytes torch has allocated on the GPU now, with the peak counter reset (None on the CPU,
    where torch keeps no such account)."""
    if device != "cuda":
        return None
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    return int(torch.cuda.memory_allocated())


def _as_tensors(out: Any) -> list[Any]:
    import torch

    items = list(out) if isinstance(out, list | tuple) else [out]
    return [o for o in items if isinstance(o, torch.Tensor)]


def _alias(t: Any) -> Any:
    """``t``'s memory as a tensor that is not a view of it (its own version counter)."""
    import torch

    if not isinstance(t, torch.Tensor):
        return t
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(
        t.untyped_storage(), t.storage_offset(), t.shape, t.stride())


def _fresh_views(items: list[Any]) -> list[Any]:
    """New tensor objects over the same buffers: a memo keyed on Python identity finds nothing."""
    import torch

    return [t.as_strided(t.shape, t.stride(), t.storage_offset())
            if isinstance(t, torch.Tensor) else t for t in items]


def _checked_outputs(out: Any, device: str) -> list[Any]:
    from kernelwright.evaluate.runs import OutputTypeError, as_output_list

    try:
        outputs = as_output_list(out, strict=True)
    except OutputTypeError as exc:
        raise CandidateFailure("rejected", "outputs", str(exc)) from None
    for i, o in enumerate(outputs):
        if o.device.type != device:
            raise CandidateFailure("rejected", "outputs",
                                   f"output {i} is on {o.device}, not on the task's {device}")
    return outputs


def _stage(stage: str, fn: Any) -> Any:
    try:
        return fn()
    except CandidateFailure:
        raise
    except BaseException as exc:  # SystemExit and KeyboardInterrupt from candidate code too
        raise CandidateFailure(*_failure_of(exc, stage)) from None


def _failure_of(exc: BaseException, stage: str) -> tuple[str, str, str, str]:
    import traceback

    status = "compile_error" if _is_compile_error(exc) else "runtime_error"
    return (status, stage, f"{type(exc).__name__} during {stage}: {_first_line(exc)}",
            traceback.format_exc(limit=12)[-4000:])


def _failure_reply(exc: BaseException, stage: str) -> dict[str, Any]:
    status, stage, message, detail = _failure_of(exc, stage)
    return {"ok": False, "status": status, "stage": stage, "message": message, "detail": detail}


def _is_compile_error(exc: BaseException) -> bool:
    try:
        from triton.compiler.errors import CompilationError
    except ImportError:
        return False
    return isinstance(exc, CompilationError)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines() or [""])[0][:500] if text else type(exc).__name__


def _reseed() -> None:
    import torch

    torch.manual_seed(int.from_bytes(os.urandom(8), "big") >> 1)


def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def _clock() -> float:
    import time

    return time.perf_counter()


def _die_with_parent() -> None:
    """SIGKILL this process when the process that started it dies (Linux)."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _compiled_frames() -> int:
    """Frames TorchDynamo set out to compile in this process (its own counters; those it
    compiled, where the total is not kept), 0 where it was never imported: the harness never
    imports it in a candidate's process."""
    utils = sys.modules.get("torch._dynamo.utils")
    if utils is None:
        return 0
    try:
        frames = utils.counters["frames"]
        return int(max(frames["total"], frames["ok"]))
    except Exception:  # a counter the candidate replaced: say that something was compiled
        return 1


if __name__ == "__main__":
    # Run the imported module's code, not this __main__ copy: the guard watches the module's
    # functions by name.
    from kernelwright.evaluate.candidate_worker import main as _main

    _main(sys.argv[1:])
