"""Child side of the baseline measurement: each function runs in its own process, forked from a
server that has torch imported (so a child starts in well under a second) and never CUDA.

    probe(spec, conn)     device and software versions
    warm(spec, conn)      phase 1: compile the task's model once, so Inductor's caches fill up
    measure(spec, conn)   phase 2: prepare (inputs, model, compile from the warm caches, work
                          count), say "ready", wait for "go" (the GPU is ours alone), time eager
                          and torch.compile exactly as the harness's judge does, send the result

Inputs, weights, seeds and timing follow the harness (``judge_worker.prepare`` and
``_baselines``): the same ``get_init_inputs`` / ``get_inputs`` seeding, the same number of
rotated input sets (:func:`~kernelwright.evaluate.runs.timing_set_count`), the same
:func:`~kernelwright.evaluate.timing.time_forward` (L2 flushed before each run, CUDA events,
median), so the numbers match what ``kernelwright eval`` reports. Messages to the parent are
tuples on a pipe: ``("phase", text)``, ``("ready", info)``, ``("result", record)``.
"""

from __future__ import annotations

import os
import time
import traceback
from typing import Any

from kernelwright.evaluate.inputs import trial_seed
from kernelwright.records import Precision

TIMING_SEED_INDEX = 100  # kernelwright.evaluate.judge_worker.TIMING_SEED_INDEX (tested equal)


def probe(spec: dict[str, Any], conn: Any) -> None:
    """Send the device's name and the software versions."""
    _own_session()
    try:
        from kernelwright.evaluate.devices import device_info

        info = device_info(spec["device"])
        conn.send(("result", {"status": "ok", **info, "cpus": os.cpu_count()}))
    except BaseException as exc:
        conn.send(("result", {"status": "error", "error": _describe(exc)}))


def warm(spec: dict[str, Any], conn: Any) -> None:
    """Compile the model once and run it (fills the FX-graph, autotune and kernel caches)."""
    _own_session()
    t0 = time.monotonic()
    try:
        import torch

        _set_compile_threads(spec)
        prepared = _prepare(spec, lambda text: conn.send(("phase", text)), n_sets=1)
        conn.send(("phase", "compiling"))
        compiled = torch.compile(prepared["model"])
        with torch.no_grad():
            compiled(*prepared["sets"][0])
        _sync(spec["device"])
        conn.send(("result", {"status": "ok", "seconds": time.monotonic() - t0}))
    except BaseException as exc:
        conn.send(
            (
                "result",
                {"status": "error", "seconds": time.monotonic() - t0, "error": _describe(exc)},
            )
        )


def measure(spec: dict[str, Any], conn: Any) -> None:
    """Prepare, wait for the parent's ``go``, time eager and torch.compile, send the record."""
    _own_session()
    t0 = time.monotonic()
    record: dict[str, Any] = {}
    try:
        import torch

        from kernelwright.evaluate.devices import device_info
        from kernelwright.evaluate.timing import summarise, time_forward

        def phase(text: str) -> None:
            conn.send(("phase", text))

        _set_compile_threads(spec)
        prepared = _prepare(spec, phase)
        model, sets = prepared["model"], prepared["sets"]
        record.update(prepared["work"])
        record["n_sets"] = len(sets)
        compiled = None
        if spec["compile"]:
            phase("compiling (first call)")
            c0 = time.monotonic()
            try:
                compiled = torch.compile(model)
                with torch.no_grad():
                    compiled(*sets[0])
                _sync(spec["device"])
            except Exception as exc:  # a model torch.compile cannot handle: eager only
                compiled = None
                record["compile_error"] = _describe(exc)
            record["compile_s"] = time.monotonic() - c0
        conn.send(("ready", {"prepare_s": time.monotonic() - t0}))
        if conn.recv() != ("go",):
            return
        raw: dict[str, Any] = {}
        phase("timing eager")
        with torch.no_grad():
            raw["eager"] = time_forward(model, sets, spec["device"]).to_dict()
        if compiled is not None:
            phase("timing torch.compile")
            try:
                with torch.no_grad():
                    raw["compile"] = time_forward(compiled, sets, spec["device"]).to_dict()
            except Exception as exc:
                record["compile_error"] = _describe(exc)
        for name, timing in raw.items():
            stats = summarise(timing["samples_ms"])
            record[f"{name}_ms"] = stats.median_ms
            record[f"{name}_iqr_ms"] = stats.iqr_ms
            record[f"{name}_runs"] = stats.n_runs
        record["method"] = raw["eager"]["method"]
        info = device_info(spec["device"])
        record.update(device=info["name"], torch=info["torch"], triton=info["triton"])
        if spec.get("fill_cache"):
            _fill_harness_cache(spec, info, raw)
        record["status"] = "ok" if "compile_ms" in record or not spec["compile"] else "eager_only"
    except BaseException as exc:
        record.update(status="error", error=_describe(exc))
    record["seconds"] = time.monotonic() - t0
    conn.send(("result", record))


def _prepare(spec: dict[str, Any], phase: Any, n_sets: int | None = None) -> dict[str, Any]:
    """Inputs on the device and the model, as the harness's judge builds them for timing."""
    import torch

    from kernelwright.evaluate.oplog import record_ops
    from kernelwright.evaluate.precision import apply_policy, cast_value
    from kernelwright.evaluate.runs import (
        as_output_list,
        build_model,
        clone_inputs,
        nbytes,
        timing_set_count,
    )
    from kernelwright.task.module import import_task_module

    precision = Precision(spec["precision"])
    device, seed = spec["device"], int(spec["seed"])
    apply_policy(precision)
    phase("importing the task")
    module = import_task_module(spec["task_path"], spec["size"])
    torch.manual_seed(seed)
    init_inputs = list(getattr(module, "get_init_inputs", list)())

    def one_set(j: int) -> list[Any]:
        torch.manual_seed(trial_seed(seed, TIMING_SEED_INDEX + 1 + j))
        raw = list(module.get_inputs())  # on the CPU, as the task defines them
        return list(clone_inputs(cast_value(raw, precision), device))

    phase("generating inputs (CPU)")
    sets = [one_set(0)]
    wanted = n_sets or timing_set_count(nbytes(sets[0]), device)
    sets += [one_set(j) for j in range(1, wanted)]
    phase("building the model")
    model = build_model(
        module.Model, init_inputs, trial_seed(seed, TIMING_SEED_INDEX), device, precision
    )
    work: dict[str, Any] = {}
    if n_sets is None:
        phase("counting work")
        with torch.no_grad():
            out, _ops, flops, _numels = record_ops(model, *clone_inputs(sets[0], device))
        outputs = as_output_list(out, strict=False)
        params = list(model.parameters()) + list(model.buffers())
        work = {"bytes": int(nbytes(sets[0]) + nbytes(outputs) + nbytes(params)), "flops": flops}
        del out, outputs
    return {"model": model, "sets": sets, "work": work}


def _fill_harness_cache(spec: dict[str, Any], info: dict[str, Any], raw: dict[str, Any]) -> None:
    """Store the timings where ``kernelwright eval``/``bench`` look for cached baselines."""
    from kernelwright.evaluate.baseline_cache import baseline_key, store_baselines
    from kernelwright.paths import cache_dir
    from kernelwright.task.kernelbench import load_task

    task = load_task(spec["task_path"], size=spec["size"])
    key = baseline_key(
        task.sha256,
        spec["size"],
        info["name"],
        spec["precision"],
        f"torch {info['torch']} triton {info['triton']}",
    )
    store_baselines(cache_dir(), key, raw)


def _set_compile_threads(spec: dict[str, Any]) -> None:
    threads = spec.get("compile_threads")
    if threads:
        import torch._inductor.config as inductor_config

        inductor_config.compile_threads = int(threads)


def _sync(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def _own_session() -> None:
    """Lead a new process group, so the parent can kill this child and its compile workers."""
    try:
        os.setsid()
    except OSError:
        pass


def _describe(exc: BaseException) -> str:
    tail = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-2)
    where = "".join(tail[-2:-1]).strip().splitlines()[0] if len(tail) > 1 else ""
    return f"{type(exc).__name__}: {exc}"[:400] + (f" (at {where})" if where else "")
