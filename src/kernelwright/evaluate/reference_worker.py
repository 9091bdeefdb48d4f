"""Child process: run the task's reference and store what the candidate will be judged against.

Runs before any candidate code is imported, in its own process. Writes two files:

    inputs.pt    init inputs, every run's inputs and model seed, the timing input sets
                 (the candidate's child reads this one)
    expected.pt  every run's outputs (and inputs after the call, for tasks that mutate them),
                 the timing sets' outputs (read by the parent only, deleted before the candidate
                 runs)

and a result with the work counts (FLOPs, bytes), the operators the reference dispatches, the
measured device ceilings and raw baseline timings.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

from kernelwright.errors import TaskError
from kernelwright.evaluate.executor import ChildIO
from kernelwright.evaluate.inputs import distribution_for_trial, transform_inputs, trial_seed
from kernelwright.evaluate.precision import apply_policy, cast_value
from kernelwright.evaluate.request import ReferenceRequest
from kernelwright.evaluate.runs import (
    OutputTypeError,
    all_finite,
    as_output_list,
    build_model,
    clone_inputs,
    nbytes,
    outputs_to_cpu,
    timing_set_count,
)

TIMING_SEED_INDEX = 100
VARIANT_SEED_INDEX = 200


def main(workdir: str) -> None:
    """Entry point: ``python -m kernelwright.evaluate.reference_worker WORKDIR``."""
    io = ChildIO(workdir)
    request: ReferenceRequest = io.request()
    try:
        result = run_reference(request, io.phase)
    except TaskError as exc:
        io.finish({"ok": False, "kind": "task", "error": str(exc)})
    except Exception as exc:  # the task's own code failed: report, never crash
        io.finish(
            {
                "ok": False,
                "kind": "reference",
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=8),
            }
        )
    else:
        io.finish(result)


def run_reference(req: ReferenceRequest, phase: Any) -> dict[str, Any]:
    """Compute everything the parent needs about the reference. See the module docstring."""
    import torch

    from kernelwright.evaluate.devices import device_info
    from kernelwright.task.module import import_task_module

    apply_policy(req.precision)
    phase("reference: importing task")
    module = import_task_module(req.task_path, req.size)
    model_cls = getattr(module, "Model", None)
    get_inputs = getattr(module, "get_inputs", None)
    if model_cls is None or get_inputs is None:
        raise TaskError(f"{req.task_path}: Model or get_inputs is missing after import")
    get_init_inputs = getattr(module, "get_init_inputs", lambda: [])
    torch.manual_seed(req.seed)
    init_inputs = _as_list(get_init_inputs(), "get_init_inputs()", req.task_path)

    runs: list[dict[str, Any]] = []
    expected: list[dict[str, Any]] = []
    notes: list[str] = []
    for k in range(req.trials):
        phase(f"reference: trial {k + 1}/{req.trials}")
        seed = trial_seed(req.seed, k)
        dist = distribution_for_trial(k, req.distributions)
        run, exp = _reference_run(
            model_cls, get_inputs, init_inputs, seed, dist, req, f"trial {k + 1}"
        )
        if dist != "task" and not all_finite(exp["outputs"]):
            notes.append(f"trial {k + 1}: {dist} inputs made the reference non-finite; used task")
            run, exp = _reference_run(
                model_cls, get_inputs, init_inputs, seed, "task", req, f"trial {k + 1}"
            )
        runs.append(run)
        expected.append(exp)

    variants = getattr(module, "get_input_variants", None)
    if variants is not None:
        phase("reference: input variants")
        for v, inputs in enumerate(variants()):
            inputs = _as_list(inputs, f"get_input_variants()[{v}]", req.task_path)
            seed = trial_seed(req.seed, VARIANT_SEED_INDEX + v)
            run, exp = _run_with_inputs(
                model_cls, init_inputs, seed, cast_value(inputs, req.precision), req,
                f"variant {v + 1}", "variant",
            )
            runs.append(run)
            expected.append(exp)

    phase("reference: work and operators")
    work, op_counts = _work_and_ops(model_cls, init_inputs, runs[0], req)

    timing_seed = trial_seed(req.seed, TIMING_SEED_INDEX)
    first_bytes = nbytes(runs[0]["inputs"])
    n_sets = timing_set_count(first_bytes, req.device)
    sets = []
    for j in range(n_sets):
        torch.manual_seed(trial_seed(req.seed, TIMING_SEED_INDEX + 1 + j))
        inputs = _as_list(get_inputs(), "get_inputs()", req.task_path)
        sets.append(cast_value(inputs, req.precision))
    timing_model = build_model(model_cls, init_inputs, timing_seed, req.device, req.precision)
    device_sets = [clone_inputs(s, req.device) for s in sets]
    with torch.no_grad():
        timing_outputs = [
            outputs_to_cpu(as_output_list(timing_model(*s), strict=False)) for s in device_sets
        ]

    baselines: dict[str, Any] = {}
    if req.time_eager or req.time_compile:
        from kernelwright.evaluate.timing import time_forward

        if req.time_eager:
            phase("baseline: timing eager")
            with torch.no_grad():
                baselines["eager"] = time_forward(timing_model, device_sets, req.device).to_dict()
        if req.time_compile:
            phase("baseline: compiling with torch.compile and timing")
            try:
                compiled = torch.compile(timing_model)
                with torch.no_grad():
                    baselines["compile"] = time_forward(compiled, device_sets, req.device).to_dict()
            except Exception as exc:  # a model torch.compile cannot handle: eager only
                notes.append(f"torch.compile failed: {type(exc).__name__}: {exc}"[:300])

    phase("reference: device ceilings")
    from kernelwright.hardware.ceilings import load_or_measure_ceilings

    ceilings = load_or_measure_ceilings(
        req.device, Path(req.cache_dir) if req.cache_dir else None
    )

    phase("reference: saving")
    torch.save(
        {
            "init_inputs": init_inputs,
            "runs": runs,
            "timing": {"model_seed": timing_seed, "sets": sets},
        },
        req.inputs_path,
    )
    torch.save({"runs": expected, "timing_outputs": timing_outputs}, req.expected_path)
    return {
        "ok": True,
        "n_runs": len(runs),
        "run_labels": [r["label"] for r in runs],
        "flops": work[0],
        "bytes": work[1],
        "op_counts": dict(op_counts),
        "mutates_inputs": any(e["inputs_after"] is not None for e in expected),
        "output_specs": [
            {"shape": list(o.shape), "dtype": str(o.dtype).replace("torch.", "")}
            for o in expected[0]["outputs"]
        ],
        "baselines": baselines,
        "ceilings": {
            "device": ceilings.device,
            "memory_gbps": ceilings.memory_gbps,
            "matrix_tflops": dict(ceilings.matrix_tflops),
            "source": ceilings.source,
        },
        "device_info": device_info(req.device),
        "notes": notes,
    }


def _reference_run(
    model_cls: Any,
    get_inputs: Any,
    init_inputs: list[Any],
    seed: int,
    dist: str,
    req: ReferenceRequest,
    label: str,
) -> tuple[dict[str, Any], dict[str, Any]]:
    import torch

    torch.manual_seed(seed)
    inputs = _as_list(get_inputs(), "get_inputs()", req.task_path)
    inputs = cast_value(transform_inputs(inputs, dist, seed), req.precision)
    return _run_with_inputs(model_cls, init_inputs, seed, inputs, req, f"{label} ({dist})", "trial")


def _run_with_inputs(
    model_cls: Any,
    init_inputs: list[Any],
    seed: int,
    inputs: list[Any],
    req: ReferenceRequest,
    label: str,
    kind: str,
) -> tuple[dict[str, Any], dict[str, Any]]:
    import torch

    model = build_model(model_cls, init_inputs, seed, req.device, req.precision)
    dev_inputs = clone_inputs(inputs, req.device)
    with torch.no_grad():
        try:
            outputs = as_output_list(model(*dev_inputs), strict=False)
        except OutputTypeError as exc:
            raise TaskError(f"{req.task_path}: Model.forward returned an unusable value: {exc}")
    if req.device == "cuda":
        torch.cuda.synchronize()
    mutated = any(
        isinstance(a, torch.Tensor) and not torch.equal(a.cpu(), b)
        for a, b in zip(dev_inputs, inputs, strict=True)
        if isinstance(b, torch.Tensor)
    )
    inputs_after = [
        a.detach().cpu() if isinstance(a, torch.Tensor) else a for a in dev_inputs
    ] if mutated else None
    run = {"kind": kind, "label": label, "model_seed": seed, "inputs": inputs}
    return run, {"outputs": outputs_to_cpu(outputs), "inputs_after": inputs_after}


def _work_and_ops(
    model_cls: Any, init_inputs: list[Any], run: dict[str, Any], req: ReferenceRequest
) -> tuple[tuple[int, int], Any]:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from kernelwright.evaluate.oplog import record_ops

    model = build_model(model_cls, init_inputs, run["model_seed"], req.device, req.precision)
    dev_inputs = clone_inputs(run["inputs"], req.device)
    with torch.no_grad():
        counter = FlopCounterMode(display=False)
        with counter:
            outputs = as_output_list(model(*dev_inputs), strict=False)
        _, op_counts = record_ops(model, *clone_inputs(run["inputs"], req.device))
    params = list(model.parameters()) + list(model.buffers())
    total_bytes = nbytes(dev_inputs) + nbytes(outputs) + nbytes(params)
    return (int(counter.get_total_flops()), int(total_bytes)), op_counts


def _as_list(value: Any, what: str, path: str) -> list[Any]:
    if isinstance(value, list | tuple):
        return list(value)
    raise TaskError(f"{path}: {what} returned {type(value).__name__}; expected a list")


if __name__ == "__main__":
    main(sys.argv[1])
