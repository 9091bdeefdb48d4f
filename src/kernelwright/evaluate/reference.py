"""The judge's side of a task: its reference, every call's inputs and expected outputs. Judge only.

Inputs are drawn from seeds, so any call's inputs can be made again exactly when they are needed
and exist nowhere before: trials (fresh seed each, several input distributions), the task's input
variants, throwaway warm-up inputs and the timed calls' inputs (one seed per batch and call).
All candidates of a session see the same values, so they compare.

What a call expects (outputs, inputs after the call when the reference mutates them, the fp32
reference's own error against float64, and the float64 outputs for the precision check) is
computed on first use and kept when the memory plan says so (:mod:`~kernelwright.evaluate.memory`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kernelwright.errors import TaskError
from kernelwright.evaluate.inputs import derive_seed, distribution_for_trial, transform_inputs
from kernelwright.evaluate.memory import (
    Footprint,
    MemoryPlan,
    plan_memory,
    refuse_unsized_on_cpu,
    unlimited_plan,
)
from kernelwright.evaluate.precision import apply_policy, cast_value, to_device
from kernelwright.evaluate.reference_error import measure_ref_errors
from kernelwright.evaluate.request import JudgeRequest
from kernelwright.evaluate.runs import (
    OutputTypeError,
    all_finite,
    as_output_list,
    build_model,
    builds_on_device,
    clone_inputs,
    nbytes,
)
from kernelwright.records import Precision

# Float64 weights of the timed model kept for a session's precision checks at most: small next
# to what a task's memory plan handles, and every model of a few million parameters fits
FLOAT64_KEPT_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One checked call: a trial (``distribution`` of its inputs), an input variant (the task's
    ``get_input_variants``) or a shape-range end (``shape-range``: inputs drawn with one of the
    task's size constants changed).

    ``seed`` builds the model (the candidate's code sees it); ``input_seed`` draws the inputs and
    is unrelated to it.
    """

    kind: str
    label: str
    seed: int
    distribution: str = "task"
    variant: int = -1
    input_seed: int = 0


@dataclass(slots=True)
class Expected:
    """What a single call must produce."""

    outputs: list[Any]
    inputs_after: list[Any] | None = None
    ref_error: list[float | None] | None = None
    ref_error_failure: str = ""
    exact: list[Any] | None = None  # float64 outputs, for the precision check


@dataclass(slots=True)
class Reference:
    """The task's module, its runs and what they expect; see the module docstring."""

    req: JudgeRequest
    model_cls: Any
    get_inputs: Any
    init_inputs: list[Any]
    runs: list[RunSpec] = field(default_factory=list)
    variants: list[list[Any]] = field(default_factory=list)
    plan: MemoryPlan | None = None
    footprint: Footprint | None = None
    # Bytes of each output of a call at the task's own size (the timed calls' size), measured on
    # the device: the judge's clock calibrates its reading of outputs at these sizes
    output_bytes: tuple[int, ...] = ()
    notes: list[str] = field(default_factory=list)
    processes: int = 0  # processes judged so far (their timed inputs differ)
    ref_errors: dict[int, list[float | None] | None] = field(default_factory=dict)
    # The least a trial's float64 run took (s; warm), timed in the judge: what checking a
    # timed call's precision costs
    float64_s: float | None = None
    _cache: dict[int, tuple[list[Any], Expected]] = field(default_factory=dict)
    _timing_model: Any = None
    # the timed model in float64 for timed calls' precision checks, when small (None: not built
    # yet; False: too large to keep, each check builds its own)
    _timing_model64: Any = None
    on_device: bool = False  # models built on the device (runs.builds_on_device), decided once

    # -- inputs ------------------------------------------------------------------------------

    def inputs(self, i: int) -> list[Any]:
        """Fresh pristine inputs of run ``i`` on the device."""
        run = self.runs[i]
        if run.variant >= 0:
            return clone_inputs(self.variants[run.variant], self.req.device)
        return self._draw(run.input_seed, run.distribution)

    def warmup_inputs(self, i: int) -> list[Any]:
        """Inputs laid out like run ``i``'s (shapes, strides, storage offsets) with throwaway
        values (floating tensors redrawn). The layout must match: Triton compiles a kernel for
        each class of strides and alignments it meets, and a class first met after the seal
        would need a compiler process the seal refuses."""
        import torch

        values = self.inputs(i)
        gen = torch.Generator(device=self.req.device).manual_seed(
            derive_seed(self.req.secret, "warm-up", i)
        )
        return [_redrawn(v, gen) if isinstance(v, torch.Tensor) and v.is_floating_point()
                else v for v in values]

    def timing_inputs(self, batch: int, call: int) -> list[Any]:
        """Inputs of timed call ``call`` of batch ``batch`` (the task's own distribution), new
        for every process judged (``processes``): no process can reuse another's answers."""
        return self._draw(derive_seed(self.req.secret, "timed", self.processes, batch, call),
                          "task")

    @property
    def model_seed_timing(self) -> int:
        """The weights' seed of the timed model."""
        return derive_seed(self.req.secret, "timed model")

    def _draw(self, seed: int, distribution: str) -> list[Any]:
        import torch

        torch.manual_seed(seed)
        raw = draw_inputs(self.get_inputs, self.req, "get_inputs()")
        values: list[Any] = cast_value(transform_inputs(raw, distribution, seed),
                                       self.req.precision)
        return values

    # -- expected outputs --------------------------------------------------------------------

    def expected(self, i: int) -> tuple[list[Any], Expected]:
        """Pristine inputs and expected outputs of run ``i`` (kept when the plan allows).

        The inputs may be the kept ones: callers read them and never write them.
        """
        if i in self._cache:
            return self._cache[i]
        run = self.runs[i]
        inputs = self.inputs(i)
        exp = self._run(run.seed, inputs)
        if run.kind == "trial" and run.distribution != "task" and not all_finite(exp.outputs):
            self.notes.append(f"{run.label}: its inputs made the reference non-finite; used task")
            self.runs[i] = run = RunSpec(run.kind, run.label.replace(run.distribution, "task"),
                                         run.seed, "task", input_seed=run.input_seed)
            inputs = self.inputs(i)
            exp = self._run(run.seed, inputs)
        self.ref_errors[i] = exp.ref_error
        if self.plan is None or self.plan.cache_runs:
            self._cache[i] = (inputs, exp)
        return inputs, exp

    def timing_ref_errors(self) -> list[float | None] | None:
        """Reference errors for timed outputs: per output, the largest over the trials drawn
        like the timed inputs (the task's own distribution); None where any lacks one."""
        from kernelwright.evaluate.reference_error import pooled_ref_errors

        pooled = [self.ref_errors.get(i) for i, run in enumerate(self.runs)
                  if run.kind == "trial" and run.distribution == "task"]
        return pooled_ref_errors(pooled)

    def timing_expected(self, inputs: list[Any], exact: bool = False) -> Expected:
        """Expected outputs of a timed call (the timed model's weights)."""
        import torch

        if self._timing_model is None:
            self._timing_model = build_model(self.model_cls, self.init_inputs,
                                             self.model_seed_timing, self.req.device,
                                             self.req.precision, on_device=self.on_device)
        with torch.no_grad():
            outs = as_output_list(self._timing_model(*clone_inputs(inputs, self.req.device)),
                                  strict=False)
        exp = Expected([o.detach() for o in outs])
        if exact and self._float64_wanted():
            exp.ref_error, exp.ref_error_failure, exp.exact = measure_ref_errors(
                self.model_cls, self.init_inputs, self.model_seed_timing, inputs, exp.outputs,
                self.req.device, model=self._kept_float64_model(), on_device=self.on_device)
            if not self.req.widen_atol:
                exp.ref_error = None
        return exp

    def exact_outputs(self, seed: int, inputs: list[Any]) -> list[Any] | None:
        """The outputs of the model of ``seed`` (the timed model's for ``model_seed_timing``)
        run in float64 on ``inputs``: the exact answer that arbitrates elements outside the
        tolerance (``correctness.compare_outputs``). Run only when a comparison fails, under any
        policy: the model's weights as the policy made them, widened exactly. None when it
        cannot run: it would not fit the device's free memory (a float64 copy of the
        parameters and of a call: at most four times their bytes, with a margin), or it fails.
        """
        from kernelwright.evaluate.reference_error import float64_outputs

        if self.req.device == "cuda" and self.footprint is not None:
            import torch

            fp = self.footprint
            if torch.cuda.mem_get_info()[0] < 5 * (fp.param_b + fp.call_b):
                return None
        try:
            model = build_model(self.model_cls, self.init_inputs, seed, self.req.device,
                                self.req.precision, on_device=self.on_device)
            return float64_outputs(self.model_cls, self.init_inputs, seed, inputs,
                                   self.req.device, model, self.on_device)
        except Exception:  # noqa: BLE001 - no arbitration: the comparison's verdict stands
            return None

    def _kept_float64_model(self) -> Any:
        """The timed model's weights in float64, built once a session when they take at most
        FLOAT64_KEPT_BYTES; else None, and each precision check builds (and frees) its own. A
        model built and converted for every check cost MobileNetV2 about 60 ms on a CPU, for
        up to three checks a timed batch."""
        if self._timing_model64 is None:
            weights = [t for t in (*self._timing_model.parameters(),
                                   *self._timing_model.buffers()) if t.is_floating_point()]
            self._timing_model64 = False
            if sum(t.numel() for t in weights) * 8 <= FLOAT64_KEPT_BYTES:
                try:
                    self._timing_model64 = build_model(
                        self.model_cls, self.init_inputs, self.model_seed_timing,
                        self.req.device, self.req.precision, on_device=self.on_device).double()
                except Exception:  # noqa: BLE001 - each check then builds its own and says
                    pass  # why it failed, as measure_ref_errors does
        return None if self._timing_model64 is False else self._timing_model64

    def _run(self, seed: int, inputs: list[Any]) -> Expected:
        import torch

        model = build_model(self.model_cls, self.init_inputs, seed, self.req.device,
                            self.req.precision, on_device=self.on_device)
        spare = unrun_copy(model) if self._float64_wanted() else None
        work = clone_inputs(inputs, self.req.device)
        with torch.no_grad():
            try:
                outputs = as_output_list(model(*work), strict=False)
            except OutputTypeError as exc:
                raise TaskError(
                    f"{self.req.task_path}: Model.forward returned an unusable value: {exc}"
                ) from exc
        mutated = any(
            isinstance(a, torch.Tensor) and not torch.equal(a, b)
            for a, b in zip(work, inputs, strict=True)
        )
        exp = Expected([o.detach() for o in outputs], work if mutated else None)
        del model
        if self._float64_wanted():
            started = time.perf_counter()
            exp.ref_error, exp.ref_error_failure, exp.exact = measure_ref_errors(
                self.model_cls, self.init_inputs, seed, inputs, exp.outputs, self.req.device,
                model=spare, on_device=self.on_device)
            if exp.exact is not None:  # its errors were read back: the run has finished
                took = time.perf_counter() - started
                self.float64_s = took if self.float64_s is None else min(self.float64_s, took)
            if not self.req.widen_atol:
                exp.ref_error = None  # a user's --atol applies exactly
        return exp

    def _float64_wanted(self) -> bool:
        if self.req.precision is not Precision.FP32:
            return False
        return self.plan is None or self.plan.float64

    # -- sizing ------------------------------------------------------------------------------

    def measure_and_plan(self) -> None:
        """Measure a single call's footprint and choose the memory plan (the first run's inputs;
        on a GPU the largest of that and every shape-range end)."""
        import torch

        device = self.req.device
        if device != "cuda":
            self._refuse_if_unsized()
            inputs = self.inputs(0)
            model = build_model(self.model_cls, self.init_inputs, self.runs[0].seed, device,
                                self.req.precision, on_device=self.on_device)
            with torch.no_grad():
                outputs = as_output_list(model(*clone_inputs(inputs, device)), strict=False)
            params = list(model.parameters()) + list(model.buffers())
            self.footprint = Footprint(nbytes(inputs), nbytes(outputs), nbytes(params),
                                       nbytes(outputs))
            self.plan = unlimited_plan(len(self.runs))
            return
        self.on_device = builds_on_device(self.model_cls, self.init_inputs, device)
        torch.cuda.synchronize()
        free_b, _total = torch.cuda.mem_get_info()
        # The task's own size, and the end of every shape range (they may be larger)
        sized = [0] + [i for i, run in enumerate(self.runs) if run.kind == "shape-range"]
        prints = [self._measure(i) for i in sized]
        self.footprint = Footprint(*(max(getattr(f, name) for f in prints)
                                     for name in ("in_b", "out_b", "param_b", "work_b")))
        self.plan = plan_memory(self.footprint, free_b, len(self.runs),
                                want_float64=self.req.precision is Precision.FP32)

    def _refuse_if_unsized(self) -> None:
        """At the small size, a task file that sets none runs at its own (KernelBench's files
        as published set none): count its inputs and parameters on the meta device, allocating
        nothing, and refuse it in a line if the CPU cannot run it
        (:func:`refuse_unsized_on_cpu`) instead of allocating gigabytes and interpreting
        kernels over them for hours."""
        import ast
        from pathlib import Path

        from kernelwright.task.kernelbench import task_options_from_tree
        from kernelwright.task.meta_size import meta_call_bytes

        path = Path(self.req.task_path)
        if self.req.size != "small" or task_options_from_tree(
                path, ast.parse(path.read_text())).get("small"):
            return
        try:
            counted = meta_call_bytes(self.get_inputs, self.model_cls, self.init_inputs)
        except Exception:  # inputs the meta device cannot make are measured as they are made
            return
        refuse_unsized_on_cpu(counted)

    def _measure(self, i: int) -> Footprint:
        """A single call on input set ``i`` on the device: its inputs, outputs, parameters and the
        peak allocated above what was allocated before it."""
        import torch

        inputs = self.inputs(i)
        model = build_model(self.model_cls, self.init_inputs, self.runs[i].seed, "cuda",
                            self.req.precision, on_device=self.on_device)
        params = list(model.parameters()) + list(model.buffers())
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        with torch.no_grad():
            outputs = as_output_list(model(*clone_inputs(inputs, "cuda")), strict=False)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        footprint = Footprint(in_b=nbytes(inputs), out_b=nbytes(outputs), param_b=nbytes(params),
                              work_b=max(0, peak - before))
        if i == 0:
            self.output_bytes = tuple(o.numel() * o.element_size() for o in outputs
                                      if isinstance(o, torch.Tensor))
        del model, outputs, inputs
        torch.cuda.empty_cache()
        return footprint


def load_reference(req: JudgeRequest, phase: Any) -> Reference:
    """Import the task and lay out its runs (nothing is computed yet)."""
    import torch

    from kernelwright.task.module import import_task_module

    apply_policy(req.precision)
    phase("reference: importing the task")
    module = import_task_module(req.task_path, req.size)
    model_cls = getattr(module, "Model", None)
    get_inputs = getattr(module, "get_inputs", None)
    if model_cls is None or get_inputs is None:
        raise TaskError(f"{req.task_path}: Model or get_inputs is missing after import")
    get_init_inputs = getattr(module, "get_init_inputs", list)
    torch.manual_seed(derive_seed(req.secret, "init"))
    init = as_list(get_init_inputs(), "get_init_inputs()", req.task_path)
    ref = Reference(req, model_cls, get_inputs, init)
    for k in range(req.trials):
        dist = distribution_for_trial(k, req.distributions)
        ref.runs.append(RunSpec("trial", f"trial {k + 1} ({dist})",
                                derive_seed(req.secret, "model", k), dist,
                                input_seed=derive_seed(req.secret, "inputs", k)))
    variants = getattr(module, "get_input_variants", None)
    if variants is not None:
        torch.manual_seed(derive_seed(req.secret, "variants"))
        for v, raw in enumerate(variants()):
            values = cast_value(as_list(raw, f"get_input_variants()[{v}]", req.task_path),
                                req.precision)
            ref.variants.append(clone_inputs(values, req.device))
            shapes = ", ".join(str(tuple(t.shape)) for t in values if hasattr(t, "shape"))
            ref.runs.append(RunSpec("variant", f"variant {v + 1} {shapes}",
                                    derive_seed(req.secret, "variant model", v), variant=v))
    for dim, low, high in req.shape_ranges:
        name = shape_constant(module, dim, req.task_path)
        for value in sorted({low, high}):
            torch.manual_seed(derive_seed(req.secret, "shape range", name, value))
            values = _inputs_with(module, name, value, req)
            ref.variants.append(values)
            shapes = ", ".join(str(tuple(t.shape)) for t in values if hasattr(t, "shape"))
            ref.runs.append(RunSpec("shape-range", f"{name} = {value} {shapes}",
                                    derive_seed(req.secret, "shape range model", name, value),
                                    variant=len(ref.variants) - 1))
    return ref


def unrun_copy(model: Any) -> Any:
    """A copy of a model that has not run, for the float64 reference: copying weights is
    cheaper than building the model again (seconds on the CPU for billions of parameters).
    None when it must be built again: lazy parameters take their values at the first forward,
    from the random state of that moment, and some models cannot be copied."""
    import copy

    import torch

    lazy = (torch.nn.parameter.UninitializedParameter, torch.nn.parameter.UninitializedBuffer)
    if any(isinstance(p, lazy) for p in [*model.parameters(), *model.buffers()]):
        return None
    try:
        return copy.deepcopy(model)
    except Exception:  # any object deepcopy cannot handle: build the model again instead
        return None


def shape_constant(module: Any, dim: str, task_path: str) -> str:
    """The task's module-level integer a shape range names: ``dim`` itself or ``dim_size``
    (``batch`` -> ``batch_size``, as KernelBench spells it).

    Raises:
        TaskError: the task has neither, so the range cannot be checked.
    """
    for name in (dim, f"{dim}_size"):
        value = getattr(module, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return name
    raise TaskError(
        f"{task_path}: a shape range names {dim!r}, but the task has no module-level integer "
        f"{dim} or {dim}_size that get_inputs() reads: the range cannot be checked"
    )


def _inputs_with(module: Any, name: str, value: int, req: JudgeRequest) -> list[Any]:
    """``get_inputs()`` drawn with the module's ``name`` set to ``value`` (then restored)."""
    original = getattr(module, name)
    setattr(module, name, value)
    try:
        raw = draw_inputs(module.get_inputs, req, f"get_inputs() with {name} = {value}")
    finally:
        setattr(module, name, original)
    values: list[Any] = cast_value(raw, req.precision)
    return values


def draw_inputs(get_inputs: Any, req: JudgeRequest, what: str) -> list[Any]:
    """Call ``get_inputs()`` with the device as the default for new tensors.

    Factory calls (randn, randint...) then draw straight into device memory: full-size inputs of
    several GB take milliseconds instead of seconds on the CPU. A task that needs CPU tensors
    (NumPy interop, say) falls back to a CPU draw, moved to the device.
    """
    import torch

    state = torch.random.get_rng_state()
    cuda_state = torch.cuda.get_rng_state_all() if req.device == "cuda" else None
    try:
        with torch.device(req.device):
            values = as_list(get_inputs(), what, req.task_path)
    except TaskError:
        raise
    except Exception:
        torch.random.set_rng_state(state)
        if cuda_state is not None:
            torch.cuda.set_rng_state_all(cuda_state)
        values = as_list(get_inputs(), what, req.task_path)
    return list(to_device(values, req.device))


def as_list(value: Any, what: str, path: str) -> list[Any]:
    """``value`` as a list, or a TaskError naming ``what`` returned something else."""
    if isinstance(value, list | tuple):
        return list(value)
    raise TaskError(f"{path}: {what} returned {type(value).__name__}; expected a list")


def _redrawn(v: Any, gen: Any) -> Any:
    """A tensor of ``v``'s layout (its whole storage, viewed with its strides and offset)
    holding standard-normal values drawn from ``gen``."""
    import torch

    storage = torch.empty(v.untyped_storage().nbytes() // v.element_size(), device=v.device,
                          dtype=v.dtype)
    storage.normal_(generator=gen)
    return storage.as_strided(v.shape, v.stride(), v.storage_offset())
