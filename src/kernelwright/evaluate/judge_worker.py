"""The judge: a trusted child that holds the reference and drives candidates' processes.

    python -m kernelwright.evaluate.judge_worker CONTROL_FD

Over its control channel from the parent:

    prepare     (a pickled JudgeRequest) import the task, measure a single call's footprint and plan
                the device's memory, count the reference's work and operators, compute the
                trials' expected outputs when the plan keeps them, read or measure the device
                ceilings; answer ``{"prepared": summary}`` (or why the reference failed)
    judge       (with a candidate's or a baseline's socket attached) drive that process through
                :class:`~kernelwright.evaluate.referee.Referee`; answer ``{"report": ...}``
    progress    sent by the judge at every phase, for the parent's display

The candidate's process never sees this process's memory, files or the task; the judge reads and
writes the candidate's memory, never the other way round. The judge dies with the parent.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from kernelwright.errors import TaskError
from kernelwright.evaluate.channel import Channel, ChannelClosed, ChannelError
from kernelwright.evaluate.memory import TooLarge
from kernelwright.evaluate.reference import Reference, load_reference
from kernelwright.evaluate.request import JudgeRequest
from kernelwright.evaluate.runs import as_output_list, build_model, clone_inputs, nbytes


def main(argv: list[str]) -> None:
    """Entry point; see the module docstring."""
    control = Channel.from_fd(int(argv[0]))
    header, payload = control.recv()
    request: JudgeRequest = pickle.loads(payload)
    _die_with_parent(request.run_dir)

    def progress(text: str) -> None:
        try:
            control.send({"progress": text})
        except ChannelError:
            os._exit(0)

    try:
        reference, summary = prepare(request, progress)
    except TaskError as exc:
        control.send({"prepared": {"ok": False, "kind": "task", "error": str(exc)}})
        return
    except TooLarge as exc:
        control.send({"prepared": {"ok": False, "kind": "size", "error": str(exc)}})
        return
    except Exception as exc:  # the task's own code failed: report it, never crash
        control.send({"prepared": {
            "ok": False, "kind": "reference", "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(limit=8)}})
        return
    control.send({"prepared": summary})
    serve(control, reference, progress)


def serve(control: Channel, reference: Reference, progress: Any) -> None:
    """Judge one process per ``judge`` command until the parent closes the channel."""
    from kernelwright.evaluate.referee import Assignment, Referee

    while True:
        try:
            header, _ = control.recv(max_payload=0)
            (fd,) = control.take_fds(1)
        except ChannelClosed:
            return
        process = Channel.from_fd(fd)
        job = Assignment(
            role=str(header.get("role", "candidate")),
            timing=bool(header.get("timing", True)),
            guard=bool(header.get("guard", True)),
            deadline=time.monotonic() + float(header.get("timeout_s", 300.0)),
            memory_fraction=header.get("memory_fraction"),
            source_file=str(header.get("source_file", "solution.py")),
            repeat=bool(header.get("repeat", False)),
            race_ms=_positive(header.get("race_ms")),
        )
        reference.processes += 1  # its timed inputs differ from every other process's
        try:
            report = Referee(process, reference, job, progress).run()
        except Exception as exc:  # the judge's own failure: say so, keep serving
            report = {"harness_error": f"{type(exc).__name__}: {exc}",
                      "traceback": traceback.format_exc(limit=10)}
        finally:
            process.close()
            _release_device_memory(reference.req.device)
        control.send({"report": report})


def prepare(req: JudgeRequest, phase: Any) -> tuple[Reference, dict[str, Any]]:
    """Load and size the reference; the summary the parent gets (see the module docstring)."""
    from kernelwright.evaluate.devices import device_info
    from kernelwright.hardware.ceilings import ceilings_key, load_ceilings, measure_ceilings

    if req.device == "cpu":
        import torch

        torch.set_num_threads(1)  # the judge's clock must not fight its own threads
    ref = load_reference(req, phase)
    phase("reference: measuring a single call")
    ref.measure_and_plan()
    phase("reference: counting work and operators")
    flops, total_bytes, op_counts, framework_work = _work_and_ops(ref)
    if ref.plan is not None and ref.plan.cache_runs:
        for i, run in enumerate(ref.runs):
            phase(f"reference: {run.label}")
            ref.expected(i)
    else:
        ref.expected(0)  # the first run's failures (a broken task) surface now, not per candidate
    _release_device_memory(req.device)
    phase("reference: device ceilings")
    cache = Path(req.cache_dir) if req.cache_dir else None
    ceilings = load_ceilings(req.device, cache)
    measured = ceilings is None
    if ceilings is None:
        ceilings = measure_ceilings(req.device)
    first = ref.expected(0)[1].outputs
    notes = list(ref.notes) + list(ref.plan.notes if ref.plan else ())
    failures = [e for e in (ref.expected(i)[1].ref_error_failure for i in range(1)) if e]
    if failures:
        notes.append(f"the float64 run of the reference failed ({failures[0]}); outputs are "
                     "compared with the strict tolerance and without the precision check")
    summary = {
        "ok": True,
        "run_labels": [r.label for r in ref.runs],
        "run_kinds": [r.kind for r in ref.runs],
        "flops": flops,
        "bytes": total_bytes,
        "op_counts": dict(op_counts),
        "framework_work": framework_work,
        "output_specs": [
            {"shape": list(o.shape), "dtype": str(o.dtype).removeprefix("torch.")} for o in first
        ],
        "memory": ref.plan.to_dict() if ref.plan else {},
        "footprint": vars_of(ref.footprint),
        "ceilings": {
            "device": ceilings.device,
            "memory_gbps": ceilings.memory_gbps,
            "matrix_tflops": dict(ceilings.matrix_tflops),
            "source": ceilings.source,
            "measured": measured,
            "key": ceilings_key(req.device),
        },
        "device_info": device_info(req.device),
        "notes": notes,
    }
    return ref, summary


def _work_and_ops(ref: Reference) -> tuple[int, int, Counter[str], int]:
    """FLOPs, bytes floor, ATen operator counts and framework work (elements) of run 1."""
    import torch

    from kernelwright.evaluate.oplog import NON_COMPUTE, VENDOR_OPS, record_ops

    req = ref.req
    model = build_model(ref.model_cls, ref.init_inputs, ref.runs[0].seed, req.device,
                        req.precision, on_device=ref.on_device)
    inputs = ref.inputs(0)
    with torch.no_grad():
        out, op_counts, flops, numels = record_ops(model, *clone_inputs(inputs, req.device))
    outputs = as_output_list(out, strict=False)
    params = list(model.parameters()) + list(model.buffers())
    param_b = nbytes(params)
    # Parameters that fit in half the L2 stay cached from a call to the next (timed calls
    # don't flush between calls, as a model's weights stay cached in use): not floor bytes.
    if req.device == "cuda" and param_b <= _l2_bytes() // 2:
        param_b = 0
    total = nbytes(inputs) + nbytes(outputs) + param_b
    framework = sum(n for op, n in numels.items() if op not in NON_COMPUTE and op not in VENDOR_OPS)
    del model, out, outputs, inputs
    return flops, int(total), op_counts, int(framework)


def _l2_bytes() -> int:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return int(getattr(props, "L2_cache_size", 0) or 0)


def _positive(value: Any) -> float | None:
    """A positive number from the parent's header, else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def vars_of(obj: Any) -> dict[str, Any]:
    """A dataclass's fields as a dict ({} for None)."""
    import dataclasses

    return dataclasses.asdict(obj) if obj is not None else {}


def _release_device_memory(device: str) -> None:
    """Give cached device blocks back: the next process on the device needs them."""
    import gc

    gc.collect()
    if device == "cuda":
        import torch

        torch.cuda.empty_cache()


def _die_with_parent(run_dir: str) -> None:
    """On the parent's death: remove the run's folder (candidates' scratch included) and exit."""
    import ctypes
    import shutil

    def cleanup(_signum: int, _frame: Any) -> None:
        if run_dir:
            shutil.rmtree(run_dir, ignore_errors=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, cleanup)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: no ptrace, no /proc/PID/mem
    except OSError:
        pass
    if os.getppid() == 1:  # the parent died before the signal was armed
        cleanup(0, None)


if __name__ == "__main__":
    # Run the imported module's code, not this __main__ copy: the guard watches the module's
    # functions by name.
    from kernelwright.evaluate.judge_worker import main as _main

    _main(sys.argv[1:])
