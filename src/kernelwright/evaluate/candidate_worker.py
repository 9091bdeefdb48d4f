"""Child process: import one candidate, run it on the judge's inputs, time it, publish outputs.

The order matters. Everything the guard compares against is recorded before the candidate's
code runs: precision flags, the identities of timers and harness functions, the live threads;
the launch monitor and the audit hook are in place before the import. Then:

    import       the solution file (a failure is ``compile_error``)
    runs         each trial and input variant: seed, build ``ModelNew``, fresh input clones,
                 forward with poisoned allocations; outputs and the inputs after the call are
                 kept for the judge
    timing       CUDA events (see ``timing``); the last output per input set is kept
    post check   the timed instance once more on timing set 1 (state drift)
    ablation     run 1 again with the candidate's kernels skipped, then made to raise
    publish      outputs via the transport; observations and raw timings in result.json

Nothing here decides a verdict: the judge compares outputs, the parent applies the guard's
checks to the observations.

Before all of that, :func:`warm_up` does what depends on neither the candidate nor its request
(imports, TorchDynamo, the CUDA context). A pre-started process (see ``prestart``) runs it before
its job exists; a cold one runs it first thing; either way it precedes every snapshot above.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from kernelwright.evaluate.executor import ChildIO
from kernelwright.evaluate.guard.integrity import IdentitySnapshot, live_threads
from kernelwright.evaluate.guard.monitor import AblatedLaunch, LaunchMonitor
from kernelwright.evaluate.guard.poison import poisoning_mode
from kernelwright.evaluate.guard.sandbox import install_audit_hook
from kernelwright.evaluate.precision import apply_policy, policy_flags
from kernelwright.evaluate.prestart import run_worker
from kernelwright.evaluate.request import CandidateRequest
from kernelwright.evaluate.runs import OutputTypeError, as_output_list, build_model, clone_inputs
from kernelwright.evaluate.timing import time_forward
from kernelwright.evaluate.transport import load_from_peer, save_for_peer

RELEASE_WAIT_S = 900.0


class CandidateFailure(Exception):
    """The candidate failed at a stage; carries the status the parent should give it."""

    def __init__(self, status: str, stage: str, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.stage = stage
        self.message = message
        self.detail = detail


def main(workdir: str) -> None:
    """Entry point: ``python -m kernelwright.evaluate.candidate_worker WORKDIR``."""
    io = ChildIO(workdir)
    request: CandidateRequest = io.request()
    session = CandidateSession(request, io.phase)
    result = session.run()
    io.finish(result)
    _wait_for_release(request.release_path)


class CandidateSession:
    """One candidate's evaluation inside its process; see the module docstring."""

    def __init__(self, request: CandidateRequest, phase: Any) -> None:
        self.req = request
        self.phase = phase
        self.published: dict[str, Any] = {
            "runs": [],
            "timing_outputs": None,
            "post_check": None,
            "ablation": {},
        }
        self.obs: dict[str, Any] = {}

    def run(self) -> dict[str, Any]:
        """Run every stage; never raises (a failure becomes the result's status)."""
        import torch

        req = self.req
        warm_up(req.device)  # nothing left to do in a pre-started process
        apply_policy(req.precision)
        flags_before = policy_flags()
        monitor = LaunchMonitor()
        monitor.install()
        identities = IdentitySnapshot.take(extra=monitor.patched)
        threads_before = live_threads()
        audit = install_audit_hook(req.protected_paths) if req.guard else None
        data = load_from_peer(Path(req.inputs_path), req.transport)
        result: dict[str, Any] = {"status": None, "stage": "", "message": "", "detail": ""}
        timing_raw = None
        try:
            self.phase("candidate: importing the solution")
            module = _import_solution(req.solution_path)
            self.obs["identity_after_import"] = identities.changed()
            cls = getattr(module, "ModelNew", None)
            if cls is None:
                raise CandidateFailure(
                    "compile_error",
                    "import",
                    "the solution defines no ModelNew; a KernelBench solution needs "
                    "`class ModelNew(nn.Module)` with the same constructor as Model",
                )
            self._correctness_runs(cls, data, monitor)
            if req.timing:
                timing_raw = self._timing(cls, data)
            if req.guard:
                self._ablation(cls, data, monitor)
        except CandidateFailure as failure:
            result.update(
                status=failure.status,
                stage=failure.stage,
                message=failure.message,
                detail=failure.detail,
            )
        if req.device == "cuda" and result["status"] is None:
            torch.cuda.synchronize()
        self.obs.update(
            identity_changed=identities.changed(),
            new_threads=sorted(
                name for ident, name in live_threads().items() if ident not in threads_before
            ),
            policy_before=flags_before,
            policy_after=policy_flags(),
            launches=dict(monitor.counts),
            audit_denied=list(audit.denied) if audit else [],
            subprocesses=list(audit.subprocesses) if audit else [],
        )
        if audit is not None:
            audit.active = False  # the harness's own publishing below is not the candidate's
        result["observations"] = self.obs
        result["timing"] = timing_raw.to_dict() if timing_raw is not None else None
        result["published"] = self._publish()
        return result

    # -- stages --------------------------------------------------------------------------------

    def _correctness_runs(self, cls: Any, data: dict[str, Any], monitor: LaunchMonitor) -> None:
        import torch

        req = self.req
        for i, run in enumerate(data["runs"]):
            self.phase(f"candidate: {run['label']}")
            model = _stage(
                "construct",
                lambda run=run: build_model(
                    cls, data["init_inputs"], run["model_seed"], req.device, req.precision
                ),
            )
            inputs = clone_inputs(run["inputs"], req.device)
            counts: Counter[str] = Counter()
            launches_before = sum(monitor.counts.values())
            with torch.no_grad(), poisoning_mode(counts):
                out = _stage("forward", lambda model=model, inputs=inputs: model(*inputs))
            _sync(req.device)
            try:
                outputs = as_output_list(out, strict=True)
            except OutputTypeError as exc:
                self.obs["output_type_error"] = str(exc)
                raise CandidateFailure("rejected", "outputs", str(exc)) from exc
            if i == 0:
                self.obs["op_counts"] = dict(counts)
                self.obs["launches_first_run"] = sum(monitor.counts.values()) - launches_before
            self.published["runs"].append(
                {"outputs": [o.detach() for o in outputs], "inputs_after": inputs}
            )

    def _timing(self, cls: Any, data: dict[str, Any]) -> Any:
        import torch

        req = self.req
        self.phase("candidate: timing")
        model = _stage(
            "construct",
            lambda: build_model(
                cls, data["init_inputs"], data["timing"]["model_seed"], req.device, req.precision
            ),
        )
        sets = [clone_inputs(s, req.device) for s in data["timing"]["sets"]]
        with torch.no_grad():
            raw = _stage("timing", lambda: time_forward(model, sets, req.device, keep_outputs=True))
        self.published["timing_outputs"] = [
            as_output_list(o, strict=False) for o in raw.last_outputs
        ]
        self.phase("candidate: re-validating after timing")
        fresh = clone_inputs(data["timing"]["sets"][0], req.device)
        with torch.no_grad():
            post = _stage("post-check", lambda: model(*fresh))
        _sync(req.device)
        self.published["post_check"] = [o.detach() for o in as_output_list(post, strict=False)]
        return raw

    def _ablation(self, cls: Any, data: dict[str, Any], monitor: LaunchMonitor) -> None:
        import torch

        req = self.req
        run = data["runs"][0]
        for mode in ("skip", "raise"):
            self.phase(f"candidate: ablation ({mode} own kernels)")
            monitor.set_mode(mode)
            try:
                model = build_model(
                    cls, data["init_inputs"], run["model_seed"], req.device, req.precision
                )
                inputs = clone_inputs(run["inputs"], req.device)
                with torch.no_grad(), poisoning_mode(Counter()):
                    out = model(*inputs)
                _sync(req.device)
                self.published["ablation"][mode] = [
                    o.detach() for o in as_output_list(out, strict=False)
                ]
                self.obs[f"ablation_{mode}"] = "returned"
            except AblatedLaunch:
                self.published["ablation"][mode] = None
                self.obs[f"ablation_{mode}"] = "raised"
            except Exception as exc:  # any failure without its kernels is the expected outcome
                self.published["ablation"][mode] = None
                self.obs[f"ablation_{mode}"] = f"failed: {type(exc).__name__}"
                if _is_cuda_error(exc):
                    break
            finally:
                monitor.set_mode("count")

    def _publish(self) -> str | None:
        path = Path(self.req.outputs_path)
        try:
            save_for_peer(self.published, path, self.req.transport)
        except Exception as exc:  # a broken device after a failure: nothing to publish
            self.obs["publish_error"] = f"{type(exc).__name__}: {exc}"
            return None
        return str(path)


def warm_up(device: str) -> None:
    """Everything of a candidate's process that depends on neither the candidate nor its request.

    Safe to repeat (the second time costs microseconds), so a cold start and a pre-started
    process both call it at the start of :meth:`CandidateSession.run`.
    """
    _preload_libraries()
    _first_dispatch_mode()
    if device == "cuda":
        import torch

        torch.cuda.synchronize()  # creates the CUDA context (the first call's cost)


def _preload_libraries() -> None:
    """Import what the harness and typical candidates use before the identity snapshot.

    Some imports rebind library functions on first import; done here, that is not mistaken for
    the candidate's doing.
    """
    import importlib

    for name in (
        "torch.utils._python_dispatch",
        "torch.utils.cpp_extension",
        "triton",
        "triton.language",
        "triton.testing",
    ):
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def _first_dispatch_mode() -> None:
    """Dispatch one operator under the poisoning mode, as the first correctness run would.

    The first dispatch under a ``TorchDispatchMode`` imports TorchDynamo (seconds, 800 modules).
    TorchDynamo wraps ``torch.manual_seed``, which is therefore not watched (seeding is no
    timing function).
    """
    import torch

    with torch.no_grad(), poisoning_mode(Counter()):
        torch.ones(1).add_(1)


def _stage(stage: str, fn: Any) -> Any:
    """Run one step of the candidate's code, turning any failure into a CandidateFailure."""
    try:
        return fn()
    except CandidateFailure:
        raise
    except BaseException as exc:  # SystemExit and KeyboardInterrupt from candidate code too
        status = "compile_error" if _is_compile_error(exc) else "runtime_error"
        raise CandidateFailure(
            status,
            stage,
            f"{type(exc).__name__} during {stage}: {_first_line(exc)}",
            traceback.format_exc(limit=12)[-4000:],
        ) from None


def _import_solution(path: str) -> Any:
    name = "kernelwright_candidate"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CandidateFailure("compile_error", "import", f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        raise CandidateFailure(
            "compile_error",
            "import",
            f"importing the solution raised {type(exc).__name__}: {_first_line(exc)}",
            traceback.format_exc(limit=12)[-4000:],
        ) from None
    return module


def _is_compile_error(exc: BaseException) -> bool:
    try:
        from triton.compiler.errors import CompilationError
    except ImportError:
        return False
    return isinstance(exc, CompilationError)


def _is_cuda_error(exc: BaseException) -> bool:
    return "CUDA error" in str(exc) or type(exc).__name__ == "AcceleratorError"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines() or [""])[0][:500] if text else type(exc).__name__


def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def _wait_for_release(path: str) -> None:
    """Keep published device memory alive until the judge has read it."""
    if not path:
        return
    deadline = time.monotonic() + RELEASE_WAIT_S
    release = Path(path)
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


if __name__ == "__main__":
    run_worker(main, warm_up)
