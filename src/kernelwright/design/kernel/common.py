"""What every kernel generator shares: the rendered kernel record, sizes and outputs in wrappers.

A generator returns a :class:`RenderedKernel`: the ``@triton.jit`` sources, one wrapper function
(checks, allocation, launch) and the helpers the bodies call. Wrappers compute every size from
the runtime tensors (``x.shape[1]``), never from the shapes seen at capture, so one file serves
every input shape the task may use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernelwright.design.aten import classify, lookup_index
from kernelwright.design.axes import Layout
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph, Ref
from kernelwright.design.kernel.emitter import ALIGN_MAX, BodyEmitter, KernelArgs, safe_name
from kernelwright.errors import KernelwrightError

TORCH_DTYPES = {
    "float32": "torch.float32",
    "float16": "torch.float16",
    "bfloat16": "torch.bfloat16",
    "float64": "torch.float64",
    "int64": "torch.int64",
    "int32": "torch.int32",
    "int16": "torch.int16",
    "int8": "torch.int8",
    "uint8": "torch.uint8",
    "bool": "torch.bool",
}


class DesignError(KernelwrightError):
    """A design cannot be rendered for this group (a template precondition does not hold), or a
    graph cannot be fused; the CLI reports it as one line."""


@dataclass(frozen=True, slots=True)
class RenderedKernel:
    """The source a group contributes to the emitted file.

    Attributes:
        kernels: ``@triton.jit`` functions, each preceded by its banner comment.
        wrapper: the Python function that checks, allocates and launches.
        wrapper_name: its name.
        args: the wrapper's parameters (tensor and scalar values of the forward).
        outputs: the values it returns, in order.
        helpers: names of shared ``@triton.jit`` helpers the kernels call.
        notes: lines for the file header (the skill's conditions that held).
    """

    kernels: tuple[str, ...]
    wrapper: str
    wrapper_name: str
    args: tuple[str, ...]
    outputs: tuple[str, ...]
    helpers: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass
class Code:
    """Lines with indentation, for kernels and wrappers."""

    lines: list[str] = field(default_factory=list)
    depth: int = 0

    def add(self, *lines: str) -> None:
        for line in lines:
            self.lines.append(("    " * self.depth + line) if line else "")

    def extend(self, lines: Sequence[str]) -> None:
        self.add(*lines)

    def indent(self) -> None:
        self.depth += 1

    def dedent(self) -> None:
        self.depth -= 1

    def text(self) -> str:
        return "\n".join(self.lines)


def dim_sources(graph: OpGraph, group: Group, layout: Layout) -> dict[int, str]:
    """Domain dimension -> a wrapper expression reading its runtime size from an input (not
    from one holding a selection's k positions: its selected dimension is k long)."""
    sources: dict[int, str] = {}
    for name in group.inputs:
        axes = layout.axes.get(name)
        if axes is None or name in layout.narrow:
            continue
        for k, a in enumerate(axes):
            if a is not None and a not in sources:
                sources[a] = f"{safe_name(name)}.shape[{k}]"
    for name in group.nodes:  # a lookup's trailing dimensions are its table's
        node = graph.node(name)
        index = lookup_index(node) if classify(node) == "lookup" else None
        if index is None or not isinstance(node.args[0], Ref):
            continue
        k = graph.meta(index.name).rank
        for j, a in enumerate(layout.axes[name][k:]):
            if a is not None and a not in sources:
                sources[a] = f"{safe_name(node.args[0].name)}.shape[{1 + j}]"
    missing = [d for d in range(len(layout.hint)) if d not in sources]
    if missing:
        raise DesignError(f"no input tells the runtime size of domain dimensions {missing}")
    return sources


def float_source(graph: OpGraph, group: Group) -> str | None:
    """An input whose dtype floating outputs follow (the precision policy's run dtype)."""
    for name in group.inputs:
        if graph.meta(name).is_float:
            return safe_name(name)
    return None


def allocate(
    graph: OpGraph, group: Group, layout: Layout, code: Code, device_of: str, narrow: str = ""
) -> None:
    """``out = torch.empty(shape, ...)`` for every output of the group (contiguous); ``narrow``
    is the size of a selection's results along the selected dimension."""
    fsrc = float_source(graph, group)
    for name in group.outputs:
        meta = graph.meta(name)
        axes = layout.axes[name]
        short = name in layout.narrow
        sizes = [
            "1" if a is None else narrow if short and a in layout.reduce else f"dim{a}"
            for a in axes
        ]
        node = graph.node(name) if graph.has_node(name) else None
        if node is not None and node.target == "aten.cat.default":
            dim = int(node.args[1]) % meta.rank if len(node.args) > 1 else 0  # type: ignore[arg-type]
            sizes[dim] = f"{sizes[dim]} * {len(node.args[0])}"  # type: ignore[arg-type]
        dims = ", ".join(sizes)
        shape = f"({dims},)" if len(axes) == 1 else f"({dims})"
        if meta.is_float and fsrc is not None:
            dtype = f"{fsrc}.dtype"
        else:
            dtype = TORCH_DTYPES.get(meta.dtype, "torch.float32")
        code.add(
            f"{safe_name(name)} = torch.empty({shape}, device={device_of}.device, dtype={dtype})"
        )


def wrapper_params(graph: OpGraph, group: Group) -> list[str]:
    """The wrapper's parameters: the group's tensor inputs then the shape scalars it reads."""
    params = [safe_name(x) for x in group.inputs]
    for name in group.nodes:
        for r in graph.node(name).refs():
            if graph.has_node(r) and graph.node(r).kind == "sym" and safe_name(r) not in params:
                params.append(safe_name(r))
    return params


# Plain-Python helpers every wrapper may call; the emitted file includes those a wrapper calls.
# _pow2 and _cdiv stand in for triton.next_power_of_2 and triton.cdiv, which are Triton constexpr
# functions costing microseconds a call from Python: a wrapper's host time is on the clock of
# every call, and a sub-millisecond kernel leaves the GPU waiting once it passes the kernel's.
WRAPPER_HELPERS = {
    "_align": f'''def _align(n):
    """The largest power of two dividing n, at most {ALIGN_MAX} (a kernel's *_ALIGN constexpr)."""
    return min(n & -n, {ALIGN_MAX}) if n else {ALIGN_MAX}''',
    "_pow2": '''def _pow2(n):
    """The least power of two >= n (0 for 0), as triton.next_power_of_2."""
    return 1 << (n - 1).bit_length() if n > 0 else 0''',
    "_cdiv": '''def _cdiv(a, b):
    """ceil(a / b) for integers, as triton.cdiv."""
    return -(-a // b)''',
    # nn.Module.get_parameter checks every step of the path (about 10 us a name); a model of a
    # few hundred parameters would pay milliseconds of host time a call for it.
    "_leaf": '''def _leaf(module, path):
    """The parameter or buffer of module at path ("features.0.weight"), read where nn.Module
    keeps it, as get_parameter and get_buffer do without their checks."""
    *owners, name = path.split(".")
    for owner in owners:
        module = module._modules[owner]
    if name in module._parameters:
        return module._parameters[name]
    return module._buffers[name]''',
}


# Triton's launch path binds and specialises every argument, keys its cache and builds launch
# metadata on each call: 20-45 us of host time a launch (H100 host, triton 3.6), which a
# sub-millisecond call pays in full. _launch takes that path once per specialisation and then
# launches the compiled kernel it returned, through Triton's API for compiled kernels
# (compiled[grid](...), which honours the launch hooks), so whatever observes either path sees
# every launch. The key is finer than Triton's own (every scalar's value, not only whether it
# is 1 or a multiple of 16), so it never reuses a kernel Triton would have specialised anew.
WRAPPER_HELPERS["_launch"] = '''try:
    from triton.tools.tensor_descriptor import TensorDescriptor as _TensorDescriptor
except ImportError:  # a Triton without host-side descriptors
    _TensorDescriptor = ()
_LAUNCHED = {}
_KEYED_BY_VALUE = (float, bool, str, type(None))  # besides ints


def _launch(kernel, grid, *args, **meta):
    """kernel[grid](*args, **meta), the arguments' binding done once per specialisation: the
    tensors' dtypes and offsets from 16-byte boundaries, the descriptors' dtypes and blocks,
    scalars' types and values (the keywords' values: a wrapper passes each one's values of one
    type); later launches of it go to the compiled kernel on the same device. A launch with
    any other argument takes Triton's path. The kernel is keyed by identity: it lives as long
    as this module, which holds the keys."""
    try:
        key = (id(kernel), tuple(meta), *meta.values(), *[
            a if type(a) is int
            else (a.dtype, a.data_ptr() & 15) if isinstance(a, torch.Tensor)
            else (a.base.dtype, *a.block_shape, a.padding) if type(a) is _TensorDescriptor
            else (type(a), a) if type(a) in _KEYED_BY_VALUE
            else [a]  # anything else (a tuple of tensors...) is unhashable here: never kept
            for a in args
        ])
        known = _LAUNCHED.get(key)
    except TypeError:  # an argument that cannot be a key: Triton's path every time
        return kernel[grid](*args, **meta)
    if (known is not None and type(grid) is tuple and not getattr(kernel, "pre_run_hooks", None)
            and known[2] == torch.cuda.current_device()):
        compiled, names = known[0], known[1]
        compiled[grid + (1,) * (3 - len(grid))](*args, *[meta[n] for n in names])
        return compiled
    compiled = kernel[grid](*args, **meta)
    # a launch Triton compiled and ran (not the interpreter's, nor one a caller intercepted)
    if type(compiled).__name__ == "CompiledKernel" and len(_LAUNCHED) < 4096:
        names = kernel.arg_names[len(args):]
        if all(n in meta for n in names):
            _LAUNCHED[key] = (compiled, names, torch.cuda.current_device())
    return compiled'''


# Triton's TensorDescriptor validates its layout on construction (ranks, 16-byte strides, the
# block's shape, the base's alignment): about 4 us a descriptor, a quarter of a small matrix
# product's wrapper, for a layout that is the same every call. _descriptor validates a layout
# once and builds later descriptors of it from the validated one's fields, checking the one
# property that varies with the base, its 16-byte alignment, itself.
WRAPPER_HELPERS["_descriptor"] = '''_DESCRIPTOR_FIELDS = {}  # layout -> (type, fields but base)


def _descriptor(base, shape, strides, block):
    """TensorDescriptor(base, shape, strides, block), Triton's checks made once per layout."""
    key = (base.dtype, *shape, *strides, *block)
    known = _DESCRIPTOR_FIELDS.get(key)
    if known is not None and base.data_ptr() % 16 == 0:
        desc = object.__new__(known[0])
        desc.__dict__.update(known[1], base=base)
        return desc
    from triton.tools.tensor_descriptor import TensorDescriptor

    desc = TensorDescriptor(base, shape, strides, block)
    if hasattr(desc, "__dict__"):  # a descriptor with slots is built by its constructor
        # (__dict__, not vars(): the guard refuses a candidate calling vars())
        _DESCRIPTOR_FIELDS[key] = (type(desc), {k: v for k, v in desc.__dict__.items()
                                                if k != "base"})
    return desc'''


# From this many elements on, a kernel indexes in 64 bits: 2**31 less a block, since a flat
# index of the last block runs up to a block (at most 2**16 elements) past the end before the
# mask made from it drops it (Triton computes a program id, an arange and a product of 32-bit
# arguments in 32 bits)
INDEX_LIMIT = 2**31 - 2**17
LIMIT_TEXT = "2**31 - 2**17"  # as the wrappers spell it (Python folds it when compiling)
# kernel arguments that are sizes or strides: index arithmetic multiplies by them
SIZE_OR_STRIDE = re.compile(r"stride|^dim\d+$|^n_|_rows$|^chunk$")

WRAPPER_HELPERS["_span_64"] = f'''def _span_64(t):
    """Whether the elements a view's strides reach (a slice skips some) pass a 32-bit index
    (a kernel's INDEX_64)."""
    return t.numel() > 0 and 1 + sum(
        (s - 1) * abs(st) for s, st in zip(t.shape, t.stride())
    ) >= {LIMIT_TEXT}'''


def index_64_test(args: KernelArgs) -> list[str]:
    """The wrapper's ``INDEX_64 = (...)`` before a launch: an element count past the limit, or
    for a tensor that may be a slice (``args.strided``), the span its strides reach; a count is
    a C call, the span a Python loop over the dimensions, so only slices pay it."""
    tensors = dict.fromkeys(args.spans.get(v, v) for _, v in args.pointers)
    parts = [
        f"_span_64({t})" if t in args.strided else f"{t}.numel() >= {LIMIT_TEXT}"
        for t in tensors
    ]
    lines = ["# 64-bit indices where a tensor (a slice: its span) nears 2**31 elements",
             "INDEX_64 = ("]
    line = "   "
    for k, part in enumerate(parts):
        piece = f" {part}" + (" or" if k < len(parts) - 1 else "")
        if len(line) + len(piece) > 88 and line.strip():
            lines.append(line)
            line = "   "
        line += piece
    return [*lines, line, ")"]


def program_id(axis: int, wide: bool = True) -> str:
    """``tl.program_id(axis)``, 64-bit under INDEX_64 in a kernel that takes it (``wide``; see
    KernelArgs.index_64): every index made from it then is."""
    if wide:
        return f"tl.program_id({axis}).to(tl.int64 if INDEX_64 else tl.int32)"
    return f"tl.program_id({axis})"


def index_64_casts(args: KernelArgs) -> list[str]:
    """Under INDEX_64, the kernel's size and stride arguments as 64-bit values, so that every
    offset multiplied out of them is (a loop index times a stride as well as a program's)."""
    wide = [
        s for s, _ in args.scalars
        if SIZE_OR_STRIDE.search(s) and ("stride" in s or args.widen_sizes)
    ]
    if not args.index_64 or not wide:
        return []
    return [
        "# INDEX_64 (set by the launch): an offset can pass 2**31 - 1, so "
        + ("the program ids," if args.widen_sizes else "the strides are"),
        "# sizes and strides are 64-bit, and so is every offset made from them"
        if args.widen_sizes else "# 64-bit, and so is every offset made from them",
        "if INDEX_64:",
        *(f"    {s} = tl.cast({s}, tl.int64)" for s in wide),
    ]


def align_name(scalar: str) -> str:
    """The constexpr carrying a hinted scalar's alignment: ``n_cols`` -> ``N_COLS_ALIGN``."""
    return f"{scalar.upper()}_ALIGN"


def launch(
    kernel: str, grid: str, args: KernelArgs, constexprs: Mapping[str, Any], code: Code
) -> None:
    """``kernel[grid](pointers..., scalars..., X_ALIGN=..., BLOCK=..., num_warps=...)``, made
    through ``_launch`` (Triton's per-launch binding once per specialisation)."""
    items = [v for _, v in args.pointers] + [v for _, v in args.scalars]
    exprs = dict(args.scalars)
    items += [f"{align_name(s)}=_align({exprs[s]})" for s in args.hinted]
    if args.index_64:
        code.add(*index_64_test(args))
        items.append("INDEX_64=INDEX_64")
    items += [f"{k}={v}" for k, v in constexprs.items()]
    items[:0] = [kernel, grid]
    code.add("_launch(")
    code.indent()
    line = ""
    for item in items:
        piece = f"{item}, "
        if len(line) + len(piece) > 88:
            code.add(line.rstrip())
            line = ""
        line += piece
    if line:
        code.add(line.rstrip())
    code.dedent()
    code.add(")")


def signature(name: str, args: KernelArgs, constexprs: Sequence[str]) -> list[str]:
    """The ``def name(...)`` lines of a ``@triton.jit`` kernel, then the statements that apply
    the alignment hints of its hinted scalars (see :func:`align_hints`)."""
    params = [p for p, _ in args.pointers] + [s for s, _ in args.scalars]
    params += [f"{c}: tl.constexpr" for c in constexprs]
    params += [f"{align_name(s)}: tl.constexpr" for s in args.hinted]
    if args.index_64:
        params.append("INDEX_64: tl.constexpr")
    lines = ["@triton.jit", f"def {name}("]
    line = "    "
    for p in params:
        piece = f"{p}, "
        if len(line) + len(piece) > 96:
            lines.append(line.rstrip())
            line = "    "
        line += piece
    lines.append(line.rstrip())
    lines.append("):")
    return lines + ["    " + ln for ln in [*align_hints(args), *index_64_casts(args)]]


def align_hints(args: KernelArgs) -> list[str]:
    """Restate each hinted scalar as a multiple of its ``*_ALIGN``, so that offsets built from
    it, and masks bounded by it, keep 16-byte vector loads.

    ``tl.multiple_of`` would be the natural spelling, but on a kernel argument Triton 3.6 drops
    it (it only annotates values computed in the kernel); ``// A * A`` is exact (the wrapper
    computed A from the value) and the compiler's alignment analysis reads it as a multiple of A.
    """
    if not args.hinted:
        return []
    lines = [
        "# alignment hints: each *_ALIGN is the largest power of two (<= 16) dividing that size",
        "# or stride (the wrapper's _align). Triton only specialises multiples of 16 and drops",
        "# tl.multiple_of on arguments; `// A * A` keeps the value and proves it a multiple of A,",
        "# so rows of e.g. 1000 floats keep 16-byte vector loads",
    ]
    return lines + [f"{s} = {s} // {align_name(s)} * {align_name(s)}" for s in args.hinted]


def sym_refs(graph: OpGraph, names: Sequence[str]) -> list[str]:
    """Sym nodes read by ``names``."""
    found: list[str] = []
    for n in names:
        for a in graph.node(n).args:
            if isinstance(a, Ref) and graph.has_node(a.name) and graph.node(a.name).kind == "sym":
                found.append(a.name)
    return found


def assemble(
    kname: str, args: KernelArgs, consts: list[str], head: Code, em: BodyEmitter, body: Code
) -> str:
    """A kernel's source: signature, prologue, the per-program prelude (hoisted loads, index
    maths) and the body."""
    lines = signature(kname, args, consts) + head.lines
    if em.prelude:
        lines += ["    " + ln for ln in em.prelude]
    lines += body.lines
    return "\n".join(lines)


def wrap_words(text: str, width: int) -> list[str]:
    """``text`` as lines of at most ``width`` characters (a comment's or docstring's paragraph;
    a word longer than ``width`` keeps its own line)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines
