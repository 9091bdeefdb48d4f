"""The judge: a child process that runs the task's reference and later judges the candidate.

It runs before any candidate code is imported and never shares a process with it:

    1. prepare: import the task, draw every run's inputs (fresh seed per trial, several input
       distributions, the task's input variants, rotated timing sets), run the reference, count
       its work and operators, time the baselines, measure the device ceilings;
    2. publish the inputs (``inputs.bin``, see :mod:`kernelwright.evaluate.transport`) and a
       summary (``prepared.json``); the expected outputs stay in this process's memory;
    3. serve ``compare`` commands read from stdin: load the outputs the candidate's process
       published and compare them with the expected ones, writing a JSON report; ``exit`` ends.

Keeping the expected outputs here means the candidate can never read them, and the statistics
that decide correctness are computed outside the candidate's process.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

from kernelwright.errors import TaskError
from kernelwright.evaluate.executor import ChildIO
from kernelwright.evaluate.inputs import distribution_for_trial, transform_inputs, trial_seed
from kernelwright.evaluate.precision import apply_policy, cast_value
from kernelwright.evaluate.reference_error import measure_ref_errors
from kernelwright.evaluate.request import JudgeRequest
from kernelwright.evaluate.runs import (
    OutputTypeError,
    all_finite,
    as_output_list,
    build_model,
    clone_inputs,
    nbytes,
    timing_set_count,
)
from kernelwright.evaluate.transport import load_from_peer, save_for_peer
from kernelwright.records import Precision

TIMING_SEED_INDEX = 100
VARIANT_SEED_INDEX = 200


class Reference:
    """Everything the judge holds between preparing and comparing (device tensors included)."""

    def __init__(self) -> None:
        self.init_inputs: list[Any] = []
        # kind, label, model_seed, inputs (device); trials also their input distribution
        self.runs: list[dict[str, Any]] = []
        # outputs, inputs_after (or None), ref_error (per output, or None), ref_error_failure
        self.expected: list[dict[str, Any]] = []
        self.timing_seed = 0
        self.timing_sets: list[list[Any]] = []
        self.timing_outputs: list[list[Any]] = []
        self.summary: dict[str, Any] = {}


def main(workdir: str) -> None:
    """Entry point: ``python -m kernelwright.evaluate.judge_worker WORKDIR``."""
    io = ChildIO(workdir)
    request: JudgeRequest = io.request()
    try:
        reference = prepare(request, io.phase)
    except TaskError as exc:
        _write_json(io.workdir / "prepared.json", {"ok": False, "kind": "task", "error": str(exc)})
        return
    except Exception as exc:  # the task's own code failed: report it, never crash
        _write_json(
            io.workdir / "prepared.json",
            {
                "ok": False,
                "kind": "reference",
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=8),
            },
        )
        return
    _write_json(io.workdir / "prepared.json", reference.summary)
    serve(reference, request)


def serve(reference: Reference, request: JudgeRequest) -> None:
    """Answer ``compare`` commands from stdin until ``exit`` or end of input."""
    from kernelwright.evaluate.correctness import judge_outputs

    for line in sys.stdin:
        command = json.loads(line)
        if command.get("cmd") == "exit":
            break
        if command.get("cmd") == "compare":
            try:
                published = load_from_peer(Path(command["path"]), command["transport"])
                report = judge_outputs(reference, published, request)
            except Exception as exc:  # a malformed publication is the candidate's failure
                report = {"error": f"{type(exc).__name__}: {exc}"}
            _write_json(Path(command["report"]), report)


def prepare(req: JudgeRequest, phase: Any) -> Reference:
    """Run the reference and fill a :class:`Reference`; see the module docstring."""
    import torch

    from kernelwright.evaluate.devices import device_info
    from kernelwright.task.module import import_task_module

    apply_policy(req.precision)
    phase("reference: importing the task")
    module = import_task_module(req.task_path, req.size)
    model_cls = getattr(module, "Model", None)
    get_inputs = getattr(module, "get_inputs", None)
    if model_cls is None or get_inputs is None:
        raise TaskError(f"{req.task_path}: Model or get_inputs is missing after import")
    get_init_inputs = getattr(module, "get_init_inputs", list)
    torch.manual_seed(req.seed)
    ref = Reference()
    ref.init_inputs = _as_list(get_init_inputs(), "get_init_inputs()", req.task_path)
    notes: list[str] = []

    for k in range(req.trials):
        phase(f"reference: trial {k + 1}/{req.trials}")
        seed = trial_seed(req.seed, k)
        dist = distribution_for_trial(k, req.distributions)
        run, exp = _trial(model_cls, get_inputs, ref.init_inputs, seed, dist, req, k)
        if dist != "task" and not all_finite(exp["outputs"]):
            notes.append(f"trial {k + 1}: {dist} inputs made the reference non-finite; used task")
            run, exp = _trial(model_cls, get_inputs, ref.init_inputs, seed, "task", req, k)
        ref.runs.append(run)
        ref.expected.append(exp)

    variants = getattr(module, "get_input_variants", None)
    if variants is not None:
        phase("reference: input variants")
        for v, raw in enumerate(variants()):
            inputs = cast_value(
                _as_list(raw, f"get_input_variants()[{v}]", req.task_path), req.precision
            )
            seed = trial_seed(req.seed, VARIANT_SEED_INDEX + v)
            shapes = ", ".join(str(tuple(t.shape)) for t in inputs if hasattr(t, "shape"))
            run, exp = _run(
                model_cls,
                ref.init_inputs,
                seed,
                inputs,
                req,
                f"variant {v + 1} {shapes}",
                "variant",
            )
            ref.runs.append(run)
            ref.expected.append(exp)
    notes.extend(_ref_error_notes(ref.expected))
    if req.device == "cuda" and req.precision is Precision.FP32 and req.widen_atol:
        torch.cuda.empty_cache()  # the float64 runs' blocks: the candidate shares the device

    phase("reference: counting work and operators")
    flops, total_bytes, op_counts = _work_and_ops(model_cls, ref.init_inputs, ref.runs[0], req)

    phase("reference: timing input sets")
    ref.timing_seed = trial_seed(req.seed, TIMING_SEED_INDEX)
    n_sets = timing_set_count(nbytes(ref.runs[0]["inputs"]), req.device)
    for j in range(n_sets):
        torch.manual_seed(trial_seed(req.seed, TIMING_SEED_INDEX + 1 + j))
        raw = _draw_inputs(get_inputs, req, "get_inputs()")
        ref.timing_sets.append(clone_inputs(cast_value(raw, req.precision), req.device))
    timing_model = build_model(
        model_cls, ref.init_inputs, ref.timing_seed, req.device, req.precision
    )
    with torch.no_grad():
        for s in ref.timing_sets:
            outs = as_output_list(timing_model(*clone_inputs(s, req.device)), strict=False)
            ref.timing_outputs.append([o.detach() for o in outs])

    baselines, cached = _baselines(req, timing_model, ref.timing_sets, phase, notes)
    del timing_model

    phase("reference: device ceilings")
    from kernelwright.hardware.ceilings import load_or_measure_ceilings

    ceilings = load_or_measure_ceilings(req.device, Path(req.cache_dir) if req.cache_dir else None)

    phase("reference: publishing inputs")
    save_for_peer(
        {
            "init_inputs": ref.init_inputs,
            "runs": [
                {"label": r["label"], "model_seed": r["model_seed"], "inputs": r["inputs"]}
                for r in ref.runs
            ],
            "timing": {"model_seed": ref.timing_seed, "sets": ref.timing_sets},
        },
        Path(req.inputs_path),
        req.transport,
    )
    first = ref.expected[0]["outputs"]
    ref.summary = {
        "ok": True,
        "run_labels": [r["label"] for r in ref.runs],
        "run_kinds": [r["kind"] for r in ref.runs],
        "n_timing_sets": len(ref.timing_sets),
        "flops": flops,
        "bytes": total_bytes,
        "op_counts": dict(op_counts),
        "mutates_inputs": any(e["inputs_after"] is not None for e in ref.expected),
        "output_specs": [
            {"shape": list(o.shape), "dtype": str(o.dtype).removeprefix("torch.")} for o in first
        ],
        "baselines": baselines,
        "baselines_cached": cached,
        "ceilings": {
            "device": ceilings.device,
            "memory_gbps": ceilings.memory_gbps,
            "matrix_tflops": dict(ceilings.matrix_tflops),
            "source": ceilings.source,
        },
        "device_info": device_info(req.device),
        "notes": notes,
    }
    return ref


def _baselines(
    req: JudgeRequest, model: Any, sets: list[list[Any]], phase: Any, notes: list[str]
) -> tuple[dict[str, Any], bool]:
    """Eager and torch.compile timings: from the cache when measured before, else measured."""
    import torch

    from kernelwright.evaluate.baseline_cache import baseline_key, load_baselines, store_baselines
    from kernelwright.evaluate.devices import device_info
    from kernelwright.evaluate.timing import time_forward

    if not (req.time_eager or req.time_compile):
        return {}, False
    info = device_info(req.device)
    cache = Path(req.cache_dir) if req.cache_dir and req.cache_baselines else None
    key = baseline_key(
        req.task_sha256,
        req.size,
        info["name"],
        req.precision.value,
        f"torch {info['torch']} triton {info['triton']}",
    )
    found = (load_baselines(cache, key) or {}) if cache is not None else {}
    wanted = [name for name, on in (("eager", req.time_eager), ("compile", req.time_compile)) if on]
    missing = [name for name in wanted if name not in found]
    for name in missing:
        if name == "eager":
            phase("baseline: timing eager PyTorch")
            with torch.no_grad():
                found["eager"] = time_forward(model, sets, req.device).to_dict()
        else:
            phase("baseline: torch.compile (compiling, then timing)")
            try:
                compiled = torch.compile(model)
                with torch.no_grad():
                    found["compile"] = time_forward(compiled, sets, req.device).to_dict()
            except Exception as exc:  # a model torch.compile cannot handle: eager only
                notes.append(f"torch.compile failed: {type(exc).__name__}: {exc}"[:300])
    if cache is not None and missing:
        store_baselines(cache, key, found)
    return {name: found[name] for name in wanted if name in found}, not missing


def _trial(
    model_cls: Any,
    get_inputs: Any,
    init_inputs: list[Any],
    seed: int,
    dist: str,
    req: JudgeRequest,
    k: int,
) -> tuple[dict[str, Any], dict[str, Any]]:
    import torch

    torch.manual_seed(seed)
    inputs = _draw_inputs(get_inputs, req, "get_inputs()")
    inputs = cast_value(transform_inputs(inputs, dist, seed), req.precision)
    run, exp = _run(model_cls, init_inputs, seed, inputs, req, f"trial {k + 1} ({dist})", "trial")
    run["distribution"] = dist  # the timing sets pool the reference errors of "task" trials
    return run, exp


def _run(
    model_cls: Any,
    init_inputs: list[Any],
    seed: int,
    inputs: list[Any],
    req: JudgeRequest,
    label: str,
    kind: str,
) -> tuple[dict[str, Any], dict[str, Any]]:
    import torch

    pristine = clone_inputs(inputs, req.device)
    model = build_model(model_cls, init_inputs, seed, req.device, req.precision)
    work = clone_inputs(pristine, req.device)
    with torch.no_grad():
        try:
            outputs = as_output_list(model(*work), strict=False)
        except OutputTypeError as exc:
            raise TaskError(
                f"{req.task_path}: Model.forward returned an unusable value: {exc}"
            ) from exc
    mutated = any(
        isinstance(a, torch.Tensor) and not torch.equal(a, b)
        for a, b in zip(work, pristine, strict=True)
    )
    run = {"kind": kind, "label": label, "model_seed": seed, "inputs": pristine}
    outputs = [o.detach() for o in outputs]
    expected = {
        "outputs": outputs,
        "inputs_after": work if mutated else None,
        "ref_error": None,
        "ref_error_failure": "",
    }
    del model, work
    # bf16 and tf32 keep their own, looser tolerances; a user's --atol applies exactly
    if req.precision is Precision.FP32 and req.widen_atol:
        expected["ref_error"], expected["ref_error_failure"] = measure_ref_errors(
            model_cls, init_inputs, seed, pristine, outputs, req.device
        )
    return run, expected


def _ref_error_notes(expected: list[dict[str, Any]]) -> list[str]:
    """One note when float64 runs failed: the strict tolerance applied to those runs."""
    failures = [e["ref_error_failure"] for e in expected if e.get("ref_error_failure")]
    if not failures:
        return []
    return [
        f"the float64 run of the reference failed in {len(failures)} run(s) "
        f"({failures[0]}); their outputs were compared with the strict tolerance"
    ]


def _work_and_ops(
    model_cls: Any, init_inputs: list[Any], run: dict[str, Any], req: JudgeRequest
) -> tuple[int, int, Any]:
    import torch

    from kernelwright.evaluate.oplog import record_ops

    model = build_model(model_cls, init_inputs, run["model_seed"], req.device, req.precision)
    inputs = clone_inputs(run["inputs"], req.device)
    with torch.no_grad():
        out, op_counts, flops = record_ops(model, *inputs)
    outputs = as_output_list(out, strict=False)
    params = list(model.parameters()) + list(model.buffers())
    total = nbytes(run["inputs"]) + nbytes(outputs) + nbytes(params)
    return flops, int(total), op_counts


def _draw_inputs(get_inputs: Any, req: JudgeRequest, what: str) -> list[Any]:
    """Call ``get_inputs()`` with the device as the default for new tensors.

    Factory calls (randn, randint...) then draw straight into device memory: full-size inputs
    of several GB take milliseconds instead of seconds on the CPU. Values differ from a CPU draw
    but both processes see the same published tensors. A task that needs CPU tensors (numpy
    interop, say) falls back to a CPU draw.
    """
    import torch

    state = torch.random.get_rng_state()
    cuda_state = torch.cuda.get_rng_state_all() if req.device == "cuda" else None
    try:
        with torch.device(req.device):
            return _as_list(get_inputs(), what, req.task_path)
    except TaskError:
        raise
    except Exception:
        torch.random.set_rng_state(state)
        if cuda_state is not None:
            torch.cuda.set_rng_state_all(cuda_state)
        return _as_list(get_inputs(), what, req.task_path)


def _as_list(value: Any, what: str, path: str) -> list[Any]:
    if isinstance(value, list | tuple):
        return list(value)
    raise TaskError(f"{path}: {what} returned {type(value).__name__}; expected a list")


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, default=str))
    tmp.replace(path)


if __name__ == "__main__":
    main(sys.argv[1])
