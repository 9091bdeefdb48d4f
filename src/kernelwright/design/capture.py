"""Capture: trace a task's ``Model`` into an :class:`~kernelwright.design.graph.OpGraph`.

    import the task at a size -> Model(*get_init_inputs()) with a seed -> torch.export.export
    (every input dimension dynamic) -> run_decompositions() (core ATen) -> OpGraph

Where it runs: by default in a child process (``python -m kernelwright.design.capture``), so
the optimizer's own process never imports the task or holds torch.export's state, and a task
that crashes or hangs while tracing costs a clear error, not the run. ``isolated=False`` runs it
in this process, which is safe because the task is the user's own trusted file (the evaluation
harness, not capture, is what must never share a process with candidate code); the GPU suite
script uses it to save a torch import per task.

Inputs are made under a FakeTensorMode when the task allows it (shapes only, no data), so a
capture at full size costs no gigabytes; tasks whose ``get_inputs`` need real values fall back
to real tensors.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import logging
import math
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelwright.design.graph import (
    Arg,
    DType,
    GraphInput,
    Node,
    Opaque,
    OpGraph,
    Ref,
    Symbol,
    TensorMeta,
    graph_from_dict,
)
from kernelwright.errors import TaskError
from kernelwright.records import Task

CAPTURE_SEED = 0
# A task whose inputs are real tensors (made from data, not shapes) is traced again at a moved
# size only where the moved input takes at most this much memory; a larger one holds nothing
REAL_MOVED_BYTES = 256 << 20


def capture(
    task: Task, size: str | None = None, *, isolated: bool = True, timeout_s: float = 300.0
) -> OpGraph:
    """Capture ``task`` at ``size`` (default: the task's own size).

    Raises:
        TaskError: the task cannot be imported, built, or traced by torch.export.
    """
    size = size or task.size
    if not isolated:
        return capture_path(task.path, size)
    return start_capture(task, size, timeout_s=timeout_s).result()


def start_capture(task: Task, size: str, *, timeout_s: float = 300.0) -> CaptureJob:
    """Start capturing ``task`` at ``size`` in a child process and return at once; the job's
    :meth:`~CaptureJob.result` waits for the graph (the caller starts other work meanwhile)."""
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kernelwright.design.capture", task.path, size],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    return CaptureJob(task, proc, timeout_s)


@dataclass
class CaptureJob:
    """A capture running in a child process (:func:`start_capture`)."""

    task: Task
    proc: subprocess.Popen[str]
    timeout_s: float
    started: float = field(default_factory=time.monotonic)

    def result(self) -> OpGraph:
        """The captured graph, once the child has finished.

        Raises:
            TaskError: the capture failed or ran past its time.
        """
        path = self.task.path
        try:
            left = self.started + self.timeout_s - time.monotonic()
            out, err = self.proc.communicate(timeout=max(0.0, left))
        except subprocess.TimeoutExpired as exc:
            self.cancel()
            why = f"capturing the graph took over {self.timeout_s:.0f} s"
            raise TaskError(f"{path}: {why}") from exc
        lines = [ln for ln in out.splitlines() if ln.startswith("{")]
        if self.proc.returncode != 0 or not lines:
            tail = (err.strip().splitlines() or ["no output"])[-1]
            raise TaskError(f"{path}: capturing the graph failed: {tail}")
        data = json.loads(lines[-1])
        if "error" in data:
            raise TaskError(f"{path}: capturing the graph failed: {data['error']}")
        return graph_from_dict(data)

    def cancel(self) -> None:
        """End the child if it still runs (the caller gave up: an error, Ctrl-C)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def capture_path(path: str | Path, size: str) -> OpGraph:
    """Capture in this process (see the module docstring)."""
    import torch

    from kernelwright.task.module import import_task_module

    module = import_task_module(path, size)
    model_cls = getattr(module, "Model", None)
    get_inputs = getattr(module, "get_inputs", None)
    if model_cls is None or get_inputs is None:
        raise TaskError(f"{path}: Model or get_inputs is missing")
    get_init_inputs = getattr(module, "get_init_inputs", list)
    torch.manual_seed(CAPTURE_SEED)
    init = list(get_init_inputs())
    model = model_cls(*init).eval()
    state = _lift_state(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # a recurrent layer's meta is computed by running its steps on the fake inputs: with
        # symbolic sizes that took minutes for a 6-layer LSTM over 512 steps, static seconds
        recurrent = any(isinstance(m, torch.nn.RNNBase) for m in model.modules())
        ep, inputs = _export(model, functools.partial(_make_inputs, get_inputs), str(path),
                             dynamic=not recurrent)
        graph = convert(ep, inputs, size, init=init_literal(init), state=state)
        # traced statically, every size is fixed: moving each in turn would trace the layer's
        # steps again as many times (25 s each for that LSTM), so all are held (the model's
        # ModelNew refuses other sizes, never computes something else at them)
        held = held_sizes(model, graph, functools.partial(_make_inputs, get_inputs), str(path),
                          dynamic=True) if not recurrent else fixed_sizes(graph)
    return graph.with_held(held)


def _lift_state(model: Any) -> frozenset[str]:
    """Register the model's plain tensor attributes as buffers (not saved with its state),
    and return their FQNs. ``torch.export`` refuses a forward that writes such an attribute
    (an RNN's hidden state kept on ``self``), but traces one that writes a buffer, returning
    the buffer's new value beside the outputs (see :func:`convert`). An attribute the forward
    only reads is then read by the ModelNew too (export would make it a constant of the
    program, which the ModelNew cannot see; a one-value one stays a literal)."""
    import torch

    lifted: set[str] = set()
    for prefix, module in model.named_modules():
        for name, value in list(vars(module).items()):
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                delattr(module, name)
                module.register_buffer(name, value, persistent=False)
                lifted.add(f"{prefix}.{name}" if prefix else name)
    return frozenset(lifted)


def fixed_sizes(graph: OpGraph) -> tuple[tuple[str, int], ...]:
    """Every user-input dimension the graph has a literal size for: (input, dim)."""
    return tuple(sorted(
        (u.name, d)
        for u in graph.user_inputs if u.meta is not None
        for d, s in enumerate(u.meta.shape) if s.isdigit()
    ))


def held_sizes(model: Any, graph: OpGraph, make_inputs: Any, path: str, *, dynamic: bool = True
               ) -> tuple[tuple[str, int], ...]:
    """The user-input dimensions whose captured size the graph holds in a value: (input, dim).

    ``torch.export`` fixes a dimension it cannot keep symbolic (one tied to a parameter, one a
    slice is bounded by, one a pooled size is solved from, one ``math.sqrt`` reads); the
    kernels then hold what was computed from it. A size of 1 is always fixed, and the graph
    treats it as a unit dimension (a kernel's domain leaves it out: at batch 2 an element-wise
    kernel would write one image), so it is held. Traced again with each other fixed size
    moved by one, a graph whose float constants changed computed one from that size (a softmax
    scale of 1/sqrt(head dim)): its dimensions are held. Where the model cannot be traced at
    the moved size (a channel count its weights fix) the model itself refuses that size, and
    nothing is held for it; nor where a real input (made from data) would take over
    ``REAL_MOVED_BYTES`` to make again.
    """
    import torch

    sizes: dict[int, list[tuple[int, int]]] = {}  # fixed size -> (input position, dim)
    held: list[tuple[str, int]] = []
    for u in graph.user_inputs:
        if u.meta is None:
            continue
        for d, s in enumerate(u.meta.shape):
            if s == "1":
                held.append((u.name, d))
            elif s.isdigit():
                sizes.setdefault(int(s), []).append((u.position, d))
    names = {u.position: u.name for u in graph.user_inputs}
    floats = _float_constants(graph)
    for size, dims in sizes.items():
        moved = size - 1 if size > 2 else size + 1

        def make_moved(dims: list[tuple[int, int]] = dims, moved: int = moved) -> list[Any]:
            inputs: list[Any] = list(make_inputs())
            for position, d in dims:
                t = inputs[position]
                shape = list(t.shape)
                shape[d] = moved
                if not _is_fake(t) and t.element_size() * math.prod(shape) > REAL_MOVED_BYTES:
                    raise TaskError("a real input too large to make again at another size")
                with _mode_of(t):
                    inputs[position] = torch.zeros(shape, dtype=t.dtype, device=t.device)
            return inputs

        try:
            with _quiet_refusals():
                ep, inputs = _export(model, make_moved, path, dynamic=dynamic)
        except Exception:  # the model does not run at that size: nothing to hold
            continue
        if _float_constants(convert(ep, inputs, graph.size)) != floats:
            held += [(names[position], d) for position, d in dims]
    return tuple(sorted(held))


@contextlib.contextmanager
def _quiet_refusals() -> Iterator[None]:
    """Fake tensors log a model's refusal of a moved size (a channel count its weights fix) as
    an error with a traceback, though the refusal is an expected answer here: held back."""
    logger = logging.getLogger("torch._subclasses.fake_tensor")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _is_fake(t: Any) -> bool:
    return getattr(t, "fake_mode", None) is not None


def _mode_of(t: Any) -> Any:
    """The fake mode a fake tensor belongs to (new tensors alike go in it), else no mode."""
    return getattr(t, "fake_mode", None) or contextlib.nullcontext()


def _float_constants(graph: OpGraph) -> list[float]:
    """Every float argument of the graph's nodes, sorted (booleans and ints are not floats)."""
    found: list[float] = []

    def walk(a: Any) -> None:
        if isinstance(a, float):
            found.append(a)
        elif isinstance(a, tuple):
            for x in a:
                walk(x)

    for n in graph.nodes:
        for a in (*n.args, *(v for _, v in n.kwargs)):
            walk(a)
    return sorted(found)


def init_literal(values: list[Any]) -> str:
    """``values`` (the model's construction arguments) as a Python literal, or "" when one of
    them is not a plain value a literal spells (a tensor, a dtype, an object)."""
    text = repr(values)
    try:
        same = ast.literal_eval(text) == values
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return ""
    return text if same is True else ""


def _make_inputs(get_inputs: Any) -> list[Any]:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    try:
        with FakeTensorMode(shape_env=ShapeEnv(), allow_non_fake_inputs=True):
            torch.manual_seed(CAPTURE_SEED)
            return list(get_inputs())
    except Exception:  # data-dependent input construction: use real tensors
        torch.manual_seed(CAPTURE_SEED)
        return list(get_inputs())


def _export(model: Any, make_inputs: Any, path: str, *, dynamic: bool = True
            ) -> tuple[Any, list[Any]]:
    """(the decomposed program, the inputs it was traced on): every dimension dynamic (unless
    ``dynamic`` is False), else static shapes. Each attempt gets inputs of its own: fake inputs
    carry their shape environment, and a failed dynamic trace leaves guards in it that would
    fail the static one too (a pooled size that symbolic solving cannot invert, as in a strided
    network)."""
    import torch
    from torch.export import Dim

    errors: list[str] = []
    for symbolic in (True, False) if dynamic else (False,):
        # symbolic traces without the fake-tensor dispatch cache (up to a third of their time,
        # for products over symbolic shapes): an operator on symbolic shapes is cached in the
        # trace's own shape environment, so its entries, each checked symbolically when made and
        # rebuilt so when read, serve one capture at most and cost more than they save. A static
        # trace keeps it: a recurrent layer's steps repeat the same operators on the same shapes
        # (an LSTM's capture took three times as long without it)
        with torch._dynamo.config.patch(fake_tensor_cache_enabled=not symbolic):
            inputs = make_inputs()
            shapes = tuple(
                {i: Dim.AUTO for i in range(t.dim())} if isinstance(t, torch.Tensor) else None
                for t in inputs
            ) if symbolic else None
            try:
                ep = torch.export.export(model, tuple(inputs), dynamic_shapes=shapes)
                return _decompose(ep), inputs
            except Exception as exc:  # try static shapes before giving up
                errors.append(f"{type(exc).__name__}: {_first_line(exc)}")
    raise TaskError(f"{path}: torch.export could not trace Model ({errors[-1]})")


def _first_line(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else ""


def _decompositions() -> Any:
    """Core ATen's decompositions, less those of operators kept whole (every overload):
    scaled-dot-product attention stays one node (the attention family's flash kernel) instead
    of a product, a softmax and a product that materialise the scores; a recurrent layer
    (LSTM, GRU, RNN) stays one framework call (the vendor's recurrence) instead of its steps
    unrolled over the sequence, thousands of nodes that took minutes to capture."""
    return _decomposition_table().copy()


@functools.cache
def _decomposition_table() -> Any:
    """The table of :func:`_decompositions`, built once a process (building it walks every
    registered operator); export is given a copy, since a table may be changed in use."""
    import torch

    table = torch.export.default_decompositions()
    for op in KEPT_WHOLE:
        packet = getattr(torch.ops.aten, op)
        for overload in packet.overloads():
            table.pop(getattr(packet, overload), None)
    return table


def _decompose(ep: Any) -> Any:
    """``ep.run_decompositions(_decompositions())``, at a fraction of its fixed cost.

    ``run_decompositions`` overrides the composite kernel of every CompositeImplicitAutograd
    operator torch knows (about 500) for the length of each call, most of them with that
    operator's own composite kernel: 65% of a small task's capture (torch 2.13). Here only the
    overrides that change something are made: the operators kept whole, those with a
    decomposition of their own (``matmul``), and those the program calls (a ``linear`` on a
    non-contiguous 3-D input reaches ``matmul``'s decomposition only when overridden itself).
    The graphs were the public call's on all 399 task files of this repository that capture
    (suites, held-out set, KernelBench, tests); ``test_capture_decompose`` keeps the cases that
    tell them apart. Where torch's internals are not as expected, the public call runs."""
    plan = _decomposition_plan(_composite_count())
    if plan is None:
        return ep.run_decompositions(_decompositions())
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    from torch.export.exported_program import _decompose_exported_program

    changed, own, table = plan
    called = {n.target for n in ep.graph_module.graph.nodes if n.op == "call_function"}
    composite = {**changed, **{op: fn for op, fn in own.items() if op in called}}
    with unset_fake_temporarily():  # as run_decompositions runs
        return _decompose_exported_program(
            ep, cia_to_decomp=composite, python_decomp_table=dict(table),
            joint_loss_index=None, decompose_custom_triton_ops=False,
        )


def _composite_count() -> int:
    """How many CompositeImplicitAutograd kernels are registered: a task that registers an
    operator of its own changes it, and the plan is made again."""
    import torch

    return len(torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd"))


@functools.lru_cache(maxsize=4)
def _decomposition_plan(composites: int
                        ) -> tuple[dict[Any, Any], dict[Any, Any], dict[Any, Any]] | None:
    """:func:`_decompositions` as ``run_decompositions`` splits it: (the composite operators
    overridden with something else, those overridden with their own composite kernel, the
    other decompositions); None where torch's internals are not as expected. ``composites``
    (:func:`_composite_count`) keys the cache."""
    import inspect

    try:
        from torch.export import exported_program as internals

        split = internals._split_decomp_table_to_cia_and_python_decomp
        wanted = {"cia_to_decomp", "python_decomp_table", "joint_loss_index",
                  "decompose_custom_triton_ops"}
        if not wanted <= set(inspect.signature(internals._decompose_exported_program).parameters):
            return None
    except (ImportError, AttributeError, TypeError, ValueError):
        return None
    table = _decompositions()
    materialize = getattr(table, "materialize", None)
    composite, python_table = split(dict(materialize() if materialize else table))
    own = {op: fn for op, fn in composite.items() if _own_composite(op, fn)}
    changed = {op: fn for op, fn in composite.items() if op not in own}
    return changed, own, python_table


def _own_composite(op: Any, fn: Any) -> bool:
    """``fn`` only calls ``op``'s own composite kernel (torch's default decomposition of a
    CompositeImplicitAutograd operator): overriding the kernel with it changes nothing."""
    return isinstance(fn, functools.partial) and fn.keywords.get("kernel") is op


# Operators kept whole by the decompositions (see _decompositions)
KEPT_WHOLE = ("scaled_dot_product_attention", "lstm", "gru", "rnn_tanh", "rnn_relu")


# -- FX -> OpGraph ------------------------------------------------------------------------------


def convert(ep: Any, inputs: list[Any], size: str, *, init: str = "",
            state: frozenset[str] = frozenset()) -> OpGraph:
    """Turn an ExportedProgram into an OpGraph (hints from the concrete ``inputs``; ``init``:
    the model's construction arguments as a literal, see :func:`init_literal`; ``state``: the
    buffers that are plain attributes of the model, see :func:`_lift_state`). A buffer the
    forward writes is an output after the returned ones, named in the graph's ``writes``."""
    import torch
    from torch.export.graph_signature import InputKind, OutputKind

    specs = {s.arg.name: s for s in ep.graph_signature.input_specs if hasattr(s.arg, "name")}
    out_specs = list(ep.graph_signature.output_specs)
    written = {s.target for s in out_specs if s.kind == OutputKind.BUFFER_MUTATION}
    graph_inputs: list[GraphInput] = []
    scalars: list[Node] = []  # one-value tensors the forward made (torch.tensor(0.0)), inlined
    symbols: dict[str, Symbol] = {}
    subs: dict[Any, int] = {}
    position = 0
    nodes = list(ep.graph.nodes)
    for n in nodes:
        if n.op != "placeholder":
            continue
        spec = specs.get(n.name)
        kind = {
            InputKind.PARAMETER: "parameter",
            InputKind.BUFFER: "buffer",
            InputKind.USER_INPUT: "user",
        }.get(spec.kind if spec is not None else InputKind.USER_INPUT, "constant")
        if kind == "buffer" and spec is not None and spec.target in state:
            kind = "state"
        val = n.meta.get("val")
        if kind == "user":
            real = inputs[position] if position < len(inputs) else None
            if isinstance(val, torch.Tensor) and isinstance(real, torch.Tensor):
                for d, dim in enumerate(val.shape):
                    expr = _expr(dim)
                    if expr is not None and expr.is_Symbol and str(expr) not in symbols:
                        symbols[str(expr)] = Symbol(str(expr), n.name, d, int(real.shape[d]))
                        subs[expr] = int(real.shape[d])
            graph_inputs.append(GraphInput(n.name, "user", None, "", position))
            position += 1
        else:
            target = spec.target if spec is not None and spec.target else ""
            scalar = _scalar_constant(n.name, getattr(ep, "constants", {}).get(target))
            # a one-value attribute the forward only reads is a constant, lifted or not
            read_only = kind == "constant" or (kind == "state" and target not in written)
            if read_only and scalar is not None:
                scalars.append(scalar)
                continue
            value = _constant_values(getattr(ep, "constants", {}).get(target))
            graph_inputs.append(GraphInput(n.name, kind, None, str(target),
                                           value=value if kind == "constant" else None))
    metas = {gi.name: _tensor_meta(_val(nodes, gi.name), subs) for gi in graph_inputs}
    graph_inputs = [
        GraphInput(g.name, g.kind, metas[g.name], g.target, g.position, g.value)
        for g in graph_inputs
    ]
    out_nodes: list[Node] = list(scalars)
    outputs: tuple[Arg, ...] = ()
    writes: tuple[str, ...] = ()
    users = {n.name: len(n.users) for n in nodes}
    for n in nodes:
        if n.op == "output":
            values = [_convert_arg(a) for a in _flatten_outputs(n.args[0])]
            mutated = [
                k < len(out_specs) and out_specs[k].kind == OutputKind.BUFFER_MUTATION
                for k in range(len(values))
            ]
            outputs = tuple(v for v, m in zip(values, mutated, strict=True) if not m) + tuple(
                v for v, m in zip(values, mutated, strict=True) if m
            )
            writes = tuple(
                str(out_specs[k].target) for k, m in enumerate(mutated) if m
            )
            continue
        if n.op != "call_function":
            continue
        val = n.meta.get("val")
        if val is None and users[n.name] == 0:
            continue  # assertions and other effect-only nodes
        out_nodes.append(_convert_node(n, val, subs))
    return OpGraph(
        tuple(graph_inputs), tuple(out_nodes), outputs, tuple(symbols.values()), size, init,
        writes=writes,
    )


# A tensor the forward makes from literals is written into the emitted file up to this size
CONSTANT_ELEMENTS = 4096


def _constant_values(value: Any) -> tuple[bool | int | float, ...] | None:
    """A small real tensor's elements, flat (see :data:`CONSTANT_ELEMENTS`); None otherwise."""
    import torch

    if (not isinstance(value, torch.Tensor) or value.is_complex()
            or value.numel() > CONSTANT_ELEMENTS):
        return None
    return tuple(value.detach().cpu().reshape(-1).tolist())


def _scalar_constant(name: str, value: Any) -> Node | None:
    """A tensor of one value that the forward made (``torch.tensor(0.0, device=x.device)``,
    which export lifts to a constant input) as the ``scalar_tensor`` node that computes it: a
    literal in the kernels that read it, made afresh where PyTorch does; None for anything
    else."""
    import torch

    if not isinstance(value, torch.Tensor) or value.dim() != 0 or value.is_complex():
        return None
    dtype = str(value.dtype).replace("torch.", "")
    meta = TensorMeta((), (), (), dtype)
    return Node(name, "call", "aten.scalar_tensor.default", (value.item(),),
                (("dtype", DType(dtype)),), (meta,),
                origin="a one-value tensor the forward makes (torch.tensor)")


def _val(nodes: list[Any], name: str) -> Any:
    for n in nodes:
        if n.name == name:
            return n.meta.get("val")
    return None


def _flatten_outputs(out: Any) -> list[Any]:
    if isinstance(out, list | tuple):
        items: list[Any] = []
        for o in out:
            items.extend(_flatten_outputs(o))
        return items
    return [out]


def _convert_node(n: Any, val: Any, subs: dict[Any, int]) -> Node:
    import operator

    import torch

    args = tuple(_convert_arg(a) for a in n.args)
    kwargs = tuple((k, _convert_arg(v)) for k, v in n.kwargs.items())
    target = n.target
    if target is operator.getitem:
        item = _tensor_meta(val, subs)
        return Node(n.name, "getitem", "getitem", args, kwargs, (item,) if item else ())
    if isinstance(target, torch._ops.OpOverload):
        name = f"aten.{target.overloadpacket.__name__}.{target._overloadname}"
        if target.namespace != "aten":
            name = f"{target.namespace}.{target.overloadpacket.__name__}.{target._overloadname}"
    else:
        module = getattr(target, "__module__", "") or ""
        short = getattr(target, "__name__", str(target))
        name = f"operator.{short}" if module in ("_operator", "operator") else short
    if isinstance(val, torch.Tensor):
        meta = _tensor_meta(val, subs)
        return Node(n.name, "call", name, args, kwargs, (meta,) if meta else ())
    if isinstance(val, list | tuple) and any(isinstance(v, torch.Tensor) for v in val):
        metas = tuple(_tensor_meta(v, subs) or TensorMeta((), (), (), "none") for v in val)
        return Node(n.name, "call", name, args, kwargs, metas)
    return Node(n.name, "sym", name, args, kwargs, (), sym=str(val))


def _convert_arg(a: Any) -> Arg:
    import torch
    import torch.fx

    if isinstance(a, torch.fx.Node):
        return Ref(a.name)
    if isinstance(a, torch.dtype):
        return DType(str(a).replace("torch.", ""))
    if isinstance(a, bool | int | float | str) or a is None:
        return a
    if isinstance(a, list | tuple):
        return tuple(_convert_arg(x) for x in a)
    return Opaque(repr(a))


def _expr(dim: Any) -> Any:
    node = getattr(dim, "node", None)
    return getattr(node, "expr", None)


def _hint(value: Any, subs: dict[Any, int]) -> int:
    if isinstance(value, int):
        return value
    expr = _expr(value)
    if expr is None:
        return int(value)
    return int(expr.xreplace(subs))


def _dim_str(value: Any) -> str:
    expr = _expr(value)
    return str(expr) if expr is not None else str(int(value))


def _tensor_meta(val: Any, subs: dict[Any, int]) -> TensorMeta | None:
    import torch

    if not isinstance(val, torch.Tensor):
        return None
    return TensorMeta(
        shape=tuple(_dim_str(d) for d in val.shape),
        hint=tuple(_hint(d, subs) for d in val.shape),
        strides=tuple(_hint(s, subs) for s in val.stride()),
        dtype=str(val.dtype).replace("torch.", ""),
    )


def main(argv: list[str]) -> None:
    """``python -m kernelwright.design.capture TASK SIZE``: print the graph as one JSON line."""
    path, size = argv[0], argv[1]
    try:
        graph = capture_path(path, size)
    except TaskError as exc:
        print(json.dumps({"error": str(exc)}))
        return
    except Exception as exc:  # the task's own code failed while tracing: report, don't crash
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return
    print(json.dumps(graph.to_dict()))


if __name__ == "__main__":
    main(sys.argv[1:])
