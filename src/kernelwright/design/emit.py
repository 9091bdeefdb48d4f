"""Codegen: a design becomes one self-contained ``ModelNew`` file (KernelBench solution format).

    header      what was fused, the skills that drive each kernel and the conditions that held,
                what stays with PyTorch
    imports     torch, triton, and the task's own imports
    task code   module constants (at the emitted size), helpers, used by ``__init__``
    kernels     per group: a banner, the @triton.jit kernel(s), the wrapper (sizes, allocation,
                launch)
    ModelNew    the task's ``__init__`` (same parameters, same order: seeded weights match) and a
                forward that calls the wrappers; views run in PyTorch (free), ops without a
                template are ``torch.ops.aten`` calls, labelled; both first check that the
                model and the input sizes are those it was generated for (``contract``)

The file imports nothing from kernelwright, so it runs wherever torch and triton do.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Collection, Mapping

from kernelwright.design.aten import CONSTS, classify, scan_exclusive
from kernelwright.design.choices import Design, GroupChoice
from kernelwright.design.contract import MODEL_HELPERS, guard_init, shape_checks
from kernelwright.design.families import FAMILIES, family
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import Arg, DType, GraphInput, Node, Opaque, OpGraph, Ref
from kernelwright.design.kernel.common import (
    WRAPPER_HELPERS,
    DesignError,
    RenderedKernel,
    wrap_words,
)
from kernelwright.design.kernel.emitter import safe_name
from kernelwright.design.kernel.expr import HELPERS, literal
from kernelwright.design.model_source import model_source
from kernelwright.design.shared_kernels import share_kernels

BASE_IMPORTS = (
    "import torch",
    "import torch.nn as nn",
    "import triton",
    "import triton.language as tl",
)
# Python helpers the wrappers may call: every family's, those of every wrapper, and the
# model's own (the checks of what it was generated for)
PY_HELPERS = {
    **{k: v for f in FAMILIES.values() for k, v in f.py_helpers.items()},
    **WRAPPER_HELPERS,
    **MODEL_HELPERS,
}


def render_group(graph: OpGraph, group: Group, choice: GroupChoice, name: str) -> RenderedKernel:
    """Render one fused group under its choice, by the family of its kind.

    Raises:
        DesignError: no family renders the group's kind, or the variant's preconditions do not
            hold for this group.
    """
    return family(group.kind).render(graph, group, choice, name)


def emit(
    partition: Partition,
    design: Design,
    task_source: str,
    *,
    task_name: str = "task",
    size: str = "full",
    notes: Mapping[int, str] | None = None,
    vendor: Collection[int] = (),
) -> str:
    """The ``ModelNew`` source for ``design``; groups without a choice run in PyTorch
    (``vendor``: those that had a template, left to PyTorch's kernels by this design)."""
    graph = partition.graph
    src = model_source(task_source, size)
    taken = set(src.top_names)
    rendered: dict[int, RenderedKernel] = {}
    for group in partition.groups:
        choice = design.choice(group.id)
        if choice is None or group.kind == "framework":
            continue
        base = f"{family(group.kind).prefix}_{group.id}"
        while base in taken:
            base = f"kw_{base}"
        rendered[group.id] = render_group(graph, group, choice, base)
    if not rendered:
        raise DesignError("no group of this task has a template: nothing to emit")
    rendered = share_kernels(rendered.items())
    model = _model_class(partition, rendered, src.class_body)
    helpers: list[str] = []
    for r in rendered.values():
        called = [h for h in PY_HELPERS if f"{h}(" in r.wrapper]  # _align: hinted launches
        for h in [*r.helpers, *called]:
            if h not in helpers:
                helpers.append(h)
    helpers += [h for h in PY_HELPERS if f"{h}(" in model and h not in helpers]
    for h in helpers:  # and the Python helpers those call (the list grows as it is walked)
        if h in PY_HELPERS:
            helpers.extend(d for d in PY_HELPERS if f"{d}(" in PY_HELPERS[h] and d not in helpers)
    parts: list[str] = [_header(partition, design, rendered, task_name, size, notes or {},
                                set(vendor))]
    imports = list(BASE_IMPORTS) + [i for i in src.imports if i not in BASE_IMPORTS]
    parts.append("\n".join(dict.fromkeys(imports)))
    parts.extend(src.top_level())  # in the file's order: a constant may call a helper
    parts.extend(HELPERS[h] for h in helpers if h in HELPERS)
    parts.extend(PY_HELPERS[h] for h in helpers if h in PY_HELPERS)
    for group in partition.groups:
        kernel = rendered.get(group.id)
        if kernel is None:
            continue
        choice = design.choice(group.id)
        assert choice is not None
        parts.append(_banner(group, choice))
        parts.extend(kernel.kernels)
        parts.append(kernel.wrapper)
    parts.append(model)
    return "\n\n\n".join(p.rstrip() for p in parts if p.strip()) + "\n"


def _header(
    partition: Partition,
    design: Design,
    rendered: Mapping[int, RenderedKernel],
    task_name: str,
    size: str,
    notes: Mapping[int, str],
    vendor: set[int],
) -> str:
    lines = [
        f'"""ModelNew for {task_name}: Triton kernels designed by kernelwright from its graph.',
        "",
        "Each wrapper below is one fusion group (launching its own kernels, or an earlier",
        "group's where they are the same code); its skill and the conditions that held:",
    ]
    for group in partition.groups:
        choice = design.choice(group.id)
        if group.id not in rendered or choice is None:
            continue
        opts = f" + {', '.join(choice.options)}" if choice.options else ""
        lines.append(f"  g{group.id} {group.kind} -> {choice.skill} ({choice.variant}){opts}")
        for reason in choice.reasons:
            lines.append(f"      - {reason}")
        if choice.params:
            ps = " ".join(f"{k}={v}" for k, v in sorted(choice.params.items()))
            lines.append(f"      params: {ps}")
        for note in rendered[group.id].notes:  # what the template adds (a GEMM's math)
            lines += [f"      {ln}" for ln in wrap_words(note, 86)]
    kept = [g for g in partition.groups if g.id in vendor and g.id not in rendered]
    if kept:
        lines.append("Left to PyTorch by this design (its cuBLAS, cuDNN or SDPA kernels):")
        for g in kept:
            lines.append(f"  g{g.id} " + ", ".join(partition.graph.node(n).target for n in g.nodes))
    left = [g for g in partition.groups if g.id not in rendered and g.id not in vendor]
    if left:
        lines.append("Left to PyTorch (no template):")
        for g in left:
            ops = ", ".join(partition.graph.node(n).target for n in g.nodes)
            why = notes.get(g.id) or g.note
            lines.append(f"  g{g.id} {ops}" + (f": {why}" if why else ""))
    lines += [
        "",
        "Sizes are read from the runtime tensors, so other input shapes work, except an input",
        "size of 1 or one the captured graph computed a value from: those sizes and the model's",
        "construction arguments are checked (ValueError). Floating-point math runs in fp32",
        f"whatever the storage dtype. Emitted for the task's {size} size.",
        '"""',
    ]
    return "\n".join(lines)


def _banner(group: Group, choice: GroupChoice) -> str:
    title = f" g{group.id}: {group.kind}, skill {choice.skill} ({choice.variant}) "
    return f"# {'=' * 4}{title}{'=' * max(4, 92 - len(title))}"


# -- the forward -------------------------------------------------------------------------------


def _model_class(
    partition: Partition, rendered: Mapping[int, RenderedKernel], body: tuple[str, ...]
) -> str:
    graph = partition.graph
    users = graph.user_inputs
    lines = ["class ModelNew(nn.Module):"]
    body = guard_init(body, graph)
    lines += list(body) if body else ["    def __init__(self):", "        super().__init__()"]
    params = ", ".join(["self", *(safe_name(u.name) for u in users)])
    lines += ["", f"    def forward({params}):"]
    device = next((safe_name(u.name) for u in users if u.meta is not None), None)
    batch = batch_polymorphic(graph)
    lines += ["        " + s for s in shape_checks(graph, batch)]
    if batch:
        first = safe_name(users[0].name)
        rank = users[0].meta.rank if users[0].meta else 1
        lines.append(
            f"        lead = {first}.shape[: {first}.dim() - {rank - 1}]  "
            "# extra leading dimensions fold into the first (the graph treats it as a batch)"
        )
    for u in users:
        if u.meta is None:
            continue
        v = safe_name(u.name)
        if batch:
            lines.append(
                f"        {v} = {v}.reshape(-1, *{v}.shape[{v}.dim() - {u.meta.rank - 1} :])"
                ".contiguous()"
            )
        else:
            lines.append(f"        {v} = {v}.contiguous()")
    forward = _forward_body(partition, rendered, device)
    outs = [_arg(a, device) for a in graph.returned]
    # the attributes the forward writes, as the task's forward leaves them after a call
    writes = [f"{_attr(fqn, plain=True)} = {_arg(a, device)}" for fqn, a in graph.written]
    # Only the parameters and buffers the forward reads (a batch norm's num_batches_tracked,
    # say, is not): each read costs the call Python time
    named = {
        m.group() for m in re.finditer(r"[A-Za-z_]\w*", "\n".join([*forward, *outs, *writes]))
    }
    for i in graph.inputs:
        if i.kind in ("parameter", "buffer") and i.target and safe_name(i.name) in named:
            lines.append(f"        {safe_name(i.name)} = {_attr(i.target)}")
        elif i.kind == "constant" and safe_name(i.name) in named:
            lines.append(f"        {safe_name(i.name)} = {_constant(i, device)}")
        elif i.kind == "state" and safe_name(i.name) in named and device is not None:
            # a plain attribute stays where __init__ made it (.cuda() moves only parameters
            # and buffers): the task's forward moves it to its input's device, so this does
            moved = f"{_attr(i.target, plain=True)}.to({device}.device)"
            lines.append(f"        {safe_name(i.name)} = {moved}")
    lines += ["        " + s for s in forward]
    lines += ["        " + s for s in writes]
    if batch:
        outs = [f"{o}.reshape(*lead, *{o}.shape[1:])" for o in outs]
    lines.append(
        f"        return {outs[0]}" if len(outs) == 1 else f"        return {', '.join(outs)}"
    )
    return "\n".join(lines)


def batch_polymorphic(graph: OpGraph) -> bool:
    """Every value's first dimension is the same symbolic batch size: extra leading dimensions of
    the inputs can fold into it (LayerNorm over (B, T, H) as over (B*T, H))."""
    users = [u for u in graph.user_inputs if u.meta is not None]
    if not users or graph.writes or any(u.meta is None or u.meta.rank < 2 for u in users):
        return False
    first = users[0].meta.shape[0] if users[0].meta else ""
    if not first or first.isdigit() or not first.isidentifier():
        return False
    metas = [u.meta for u in users] + [m for n in graph.nodes for m in n.meta]
    if any(m is None or m.rank == 0 or m.shape[0] != first for m in metas):
        return False
    return all(isinstance(a, Ref) for a in graph.outputs)


def _constant(i: GraphInput, device: str | None) -> str:
    """A tensor the task's forward makes from literals, made alike (on the first input's
    device), from the values captured."""
    if i.value is None or i.meta is None:
        raise DesignError(f"the forward makes a tensor constant ({i.target}) too large to write "
                          "into the file")
    values = ", ".join(_literal(v) for v in i.value)
    where = f", device={device}.device" if device is not None else ""
    shape = ", ".join(str(h) for h in i.meta.hint)
    return (f"torch.tensor([{values}], dtype=torch.{i.meta.dtype}{where})"
            f".reshape(({shape}{',' if len(i.meta.hint) == 1 else ''}))")


def _literal(v: bool | int | float) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return f"float({str(v)!r})"
    return repr(v)


def _attr(fqn: str, plain: bool = False) -> str:
    """A parameter or buffer, read afresh every call (one reassigned later is seen): as an
    attribute where every part of its path is a name, else (a Sequential's "0") by _leaf.
    ``plain``: a plain attribute, or the target of an assignment, which _leaf cannot reach."""
    if all(part.isidentifier() and not keyword.iskeyword(part) for part in fqn.split(".")):
        return f"self.{fqn}"
    if plain:
        raise DesignError(f"the forward reads or writes the attribute {fqn}, whose path is not "
                          "made of names")
    return f"_leaf(self, {fqn!r})"


def _forward_body(
    partition: Partition, rendered: Mapping[int, RenderedKernel], device: str | None
) -> list[str]:
    graph = partition.graph
    in_kernel = {n for g in partition.groups if g.id in rendered for n in g.nodes}
    items: list[tuple[int, str, object]] = []  # (position, kind, payload)
    position = {n.name: i for i, n in enumerate(graph.nodes)}
    for g in partition.groups:
        if g.id in rendered:
            items.append((min(position[n] for n in g.nodes), "group", g))
    for n in graph.nodes:
        if n.name in in_kernel:
            continue
        if classify(n) == "const" and not _used_outside(graph, n.name, in_kernel):
            continue
        items.append((position[n.name], "node", n))
    items.sort(key=lambda t: t[0])
    available = {i.name for i in graph.inputs}
    out: list[str] = []
    pending = list(items)
    while pending:
        for k, (_, kind, payload) in enumerate(pending):  # noqa: B007 - k is used after
            deps = _deps(graph, kind, payload)
            if deps <= available:
                break
        else:
            missing = sorted(_deps(graph, pending[0][1], pending[0][2]) - available)
            raise DesignError(f"cannot order the forward: {missing} never computed")
        _, kind, payload = pending.pop(k)
        if kind == "group":
            assert isinstance(payload, Group)
            r = rendered[payload.id]
            outs = ", ".join(safe_name(o) for o in r.outputs) + ("," if len(r.outputs) == 1 else "")
            out.append(f"{outs} = {r.wrapper_name}({', '.join(r.args)})")
            available.update(payload.nodes)
        else:
            assert isinstance(payload, Node)
            out.extend(_node_line(graph, payload, device, partition))
            available.add(payload.name)
    return out


def _used_outside(graph: OpGraph, name: str, in_kernel: set[str]) -> bool:
    if name in graph.output_names():
        return True
    return any(name in n.refs() for n in graph.nodes if n.name not in in_kernel)


def _deps(graph: OpGraph, kind: str, payload: object) -> set[str]:
    if kind == "group":
        assert isinstance(payload, Group)
        deps = set(payload.inputs)
        for n in payload.nodes:
            for r in graph.node(n).refs():
                if graph.has_node(r) and graph.node(r).kind == "sym":
                    deps.add(r)
        return deps
    assert isinstance(payload, Node)
    return set(payload.refs())


SYM_OPS = {
    "operator.mul": "{0} * {1}",
    "operator.add": "{0} + {1}",
    "operator.sub": "{0} - {1}",
    "operator.floordiv": "{0} // {1}",
    "operator.truediv": "{0} / {1}",
    "operator.mod": "{0} % {1}",
    "operator.neg": "-{0}",
    "operator.pow": "{0} ** {1}",
    "sym_float": "float({0})",
    "sym_int": "int({0})",
    "sym_max": "max({0}, {1})",
    "sym_min": "min({0}, {1})",
}


# A view the forward runs is written as a reshape: it was a view of the strides the tensor had
# at capture, and a kernel's output may be laid out otherwise (PyTorch's CPU attention returns
# a tensor whose transpose is contiguous, the flash kernel's is not). A reshape is that view
# where the strides allow one, else a copy, as the task's own reshape would be.
FORWARD_TARGETS = {
    "aten.view.default": "aten.reshape.default",
    "aten._unsafe_view.default": "aten.reshape.default",
}
# Views written as the tensor's own method: the same ATen operator at a third of the host time of
# an OpOverload call (microseconds a view; a model's forward reshapes each group's parameters on
# every call, and models of many small groups are host-bound)
TENSOR_METHODS = {
    "aten.reshape.default": "reshape",
    "aten.permute.default": "permute",
    "aten.unsqueeze.default": "unsqueeze",
    "aten.squeeze.dim": "squeeze",
    "aten.transpose.int": "transpose",
    "aten.t.default": "t",
    "aten.select.int": "select",
}


def _node_line(graph: OpGraph, n: Node, device: str | None, partition: Partition) -> list[str]:
    name = safe_name(n.name)
    args = [_arg(a, device) for a in n.args]
    if n.kind == "sym":
        if n.target == "aten.sym_size.int":
            return [f"{name} = {args[0]}.shape[{args[1]}]"]
        if n.target == "aten.sym_numel.default":
            return [f"{name} = {args[0]}.numel()"]
        fmt = SYM_OPS.get(n.target)
        if fmt is None:
            raise DesignError(f"no Python form for shape arithmetic {n.target}")
        return [f"{name} = {fmt.format(*args)}"]
    if n.kind == "getitem":
        return [f"{name} = {args[0]}[{args[1]}]"]
    if n.target == "kw.scan":
        _, d, kind = n.args[:3]
        fn = "cumsum" if kind == "sum" else "cumprod"
        if scan_exclusive(n):  # the neutral value, then the scan of all but the last step
            neutral = 0 if kind == "sum" else 1
            return [
                f"{name} = torch.cat([torch.full_like({args[0]}.narrow({d}, 0, 1), {neutral}), "
                f"torch.{fn}({args[0]}.narrow({d}, 0, {args[0]}.shape[{d}] - 1), {d})], {d})"
                "  # left to PyTorch"
            ]
        return [
            f"{name} = torch.flip(torch.{fn}(torch.flip({args[0]}, [{d}]), {d}), [{d}])"
            "  # left to PyTorch"
        ]
    kwargs = [f"{k}={_arg(v, device)}" for k, v in n.kwargs]
    target = FORWARD_TARGETS.get(n.target, n.target)
    method = TENSOR_METHODS.get(target)
    if method is not None and n.args and isinstance(n.args[0], Ref) and not kwargs:
        call = f"{args[0]}.{method}({', '.join(args[1:])})"
    else:
        call = f"torch.ops.{target}({', '.join(args + kwargs)})"
    comment = ""
    left = ("framework", "select", "matmul", "attention")
    if classify(n) in left or (n.target in CONSTS and classify(n) != "const"):
        group = partition.group_of(n.name)
        why = group.note if group is not None and group.note else f"no template for {n.target}"
        comment = f"  # left to PyTorch: {why}"
    return [f"{name} = {call}{comment}"]


def _arg(a: Arg, device: str | None) -> str:
    if isinstance(a, Ref):
        return safe_name(a.name)
    if isinstance(a, DType):
        return f"torch.{a.name}"
    if isinstance(a, Opaque):
        if a.text.startswith("device(") and device is not None:
            return f"{device}.device"
        return a.text
    if isinstance(a, tuple):
        return "[" + ", ".join(_arg(x, device) for x in a) + "]"
    if isinstance(a, bool | int | float):
        return literal(a)
    return repr(a)
