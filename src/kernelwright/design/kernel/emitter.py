"""The body printer: a fusion group's nodes as Triton statements over a tile of its domain.

A kernel covers its domain with *index groups*: runs of domain dimensions flattened into one
index (``rows`` over the batch dimensions, ``cols`` over the reduced ones...), each either a
vector along a tile axis (``[BLOCK_M, 1]``, ``[1, BLOCK_N]``) or a scalar (a program id, a loop
variable). Every value is a Triton tensor broadcastable to the tile: a value that does not vary
along a group simply lacks that axis, so per-row statistics are ``[BLOCK_M, 1]`` and a weight
along the reduced axis is ``[1, BLOCK_N]``.

A load's offset is ``index * stride`` for each index group the tensor varies along, when its
strides over the group's dimensions are contiguous (checked on the strides seen at capture);
otherwise each dimension's index is recovered from the flat index by ``//`` and ``%`` and given
its own stride. Masks are the conjunction of the masks of the groups a value varies along.

Strides and sizes are runtime integers, and Triton only specialises an integer that is 1 or a
multiple of 16: a row of 1000 floats would give offsets and masks of unknown alignment, hence
scalar loads. Such scalars are *hinted* (see :meth:`KernelArgs.hint`): the wrapper passes their
power-of-two divisor as a constexpr and the kernel's first lines restate it to the compiler.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kernelwright.design.aten import (
    CONSTS,
    FORWARD_VIEWS,
    VIEWS,
    classify,
    index_range,
    lookup_index,
    tanh_of_softplus,
)
from kernelwright.design.axes import Layout
from kernelwright.design.graph import Arg, Node, OpGraph, Ref
from kernelwright.design.kernel.expr import HELPERS, POINTWISE, compute_dtype, literal

ALIGN_MAX = 16  # Triton's own divisibility specialisation: larger divisors change nothing

RESERVED = frozenset(
    [
        "tl",
        "triton",
        "torch",
        "range",
        "float",
        "int",
        "min",
        "max",
        "sum",
        "abs",
        "len",
        "pid",
        "rows",
        "cols",
        "mask",
        "row_mask",
        "col_mask",
        "start",
        "r_mask",
        "rs",
        "prev",
        "prev_mask",
        "pid_outer",
        "offs",
        "None",
        "True",
        "False",
        "acc",
        "lo",
        "hi",
        "carry",
        # the team's, the relay's and the chained scan's own variables
        "v",
        "ticket",
        "team",
        "slot",
        "seen",
        "watch",
        "at",
        "chunk",
        "lanes",
        "prefix",
        "back",
        "state",
        "flag",
        "total",
        "slots",
        "s_mask",
        "slice_len",
        "red_hi",
        "o_safe",
        "w_delta",
        # the GEMM kernels' own variables
        "M",
        "N",
        "K",
        "lhs",
        "rhs",
        "tile",
        "tiles",
        "pid_b",
        "pid_m",
        "pid_n",
        "pid_k",
        "offs_m",
        "offs_n",
        "offs_k",
        "safe_m",
        "safe_n",
        "k_mask",
        "k_lo",
        "k_hi",
        "n_m",
        "n_n",
        "in_group",
        "first_m",
        "group_m",
        "ws",
        # the implicit-GEMM convolution kernel's own variables
        "C_in",
        "H",
        "W",
        "OH",
        "OW",
        "sx_n",
        "sx_c",
        "sx_h",
        "sx_w",
        "img",
        "pix",
        "ih0",
        "iw0",
        "x_base",
        "w_base",
        "kk",
        "kc",
        "kr",
        "ih",
        "iw",
        "inside",
        "patch",
        "filt",
        # and its wrapper's
        "x_in",
        "w_in",
        "conv_out",
        "n_img",
        "C_out",
        "KH",
        "KW",
    ]
)


@dataclass(frozen=True, slots=True)
class IndexGroup:
    """Domain dimensions flattened into one index.

    Attributes:
        dims: domain dimensions, outermost first.
        index: the flat index's name (a tile-shaped vector or a scalar).
        mask: the name of the index's bounds mask (None when always in range).
        axis: tile axis of the index (0 or 1), or None for a scalar index.
        hoist: the index is fixed for the whole program (rows, outer program ids): statements
            derived from it go to the kernel's prelude, ahead of every loop.
    """

    dims: tuple[int, ...]
    index: str
    mask: str | None
    axis: int | None
    hoist: bool = False


@dataclass(frozen=True, slots=True)
class Context:
    """Where values are being computed: the index groups in effect and a name suffix."""

    groups: tuple[IndexGroup, ...]
    suffix: str = ""


@dataclass
class KernelArgs:
    """The kernel's runtime arguments, each with the wrapper expression that provides it."""

    pointers: list[tuple[str, str]] = field(default_factory=list)  # (kernel name, wrapper value)
    scalars: list[tuple[str, str]] = field(default_factory=list)
    hinted: list[str] = field(default_factory=list)  # scalars given an alignment constexpr
    # the kernel takes INDEX_64 and indexes in 64 bits when the wrapper finds an offset that
    # can pass 2**31 - 1 (kernel.common.signature, program_id and launch)
    index_64: bool = False
    # ... widening the sizes too (a GEMM's tile coordinates must stay 32-bit for TMA, and its
    # per-dimension indices fit: only its strides are widened)
    widen_sizes: bool = True
    # a pointer argument that is not a tensor (a TMA descriptor) -> the tensor it reads, whose
    # size decides INDEX_64
    spans: dict[str, str] = field(default_factory=dict)
    # tensors that may be slices (strides that skip elements): INDEX_64 checks their span
    strided: set[str] = field(default_factory=set)

    def pointer(self, value: str) -> str:
        name = f"{value}_ptr"
        if all(p != name for p, _ in self.pointers):
            self.pointers.append((name, value))
        return name

    def scalar(self, name: str, expr: str, seen: int | None = None) -> str:
        """Add a scalar argument; ``seen``: its value at capture, for :meth:`hint`."""
        if all(s != name for s, _ in self.scalars):
            self.scalars.append((name, expr))
        if seen is not None:
            self.hint(name, seen)
        return name

    def hint(self, name: str, seen: int) -> None:
        """Give scalar ``name`` (a stride, or a size that bounds a contiguous axis) an alignment
        constexpr when its value at capture is divisible by 2, 4 or 8 but not 16: Triton already
        specialises 1 and multiples of 16, and an odd value cannot align anything."""
        if seen and 1 < (seen & -seen) < ALIGN_MAX and name not in self.hinted:
            self.hinted.append(name)


class BodyEmitter:
    """Emits the statements computing a group's values in a context (memoised per context).

    Loads of values fixed for a whole program (per-row inputs) go to :attr:`prelude`, ahead of
    every loop, unless ``hoist`` is False (an epilogue inside a loop over output tiles, where
    the rows change from one iteration to the next).
    """

    def __init__(
        self,
        graph: OpGraph,
        nodes: Sequence[str],
        layout: Layout,
        args: KernelArgs,
        inputs: Sequence[str],
        *,
        hoist: bool = True,
        column_vectors: str = "",
    ) -> None:
        self.graph = graph
        self.hoist = hoist  # per-row inputs load in the prelude (False: where they are used)
        # the kernel's constexpr that says whether a [1, N] operand of a 2-D tile loads as [N],
        # expanded (see _load_row): tiles Triton may lay along axis 0 (an NCHW store)
        self.column_vectors = column_vectors
        self.members = set(nodes)
        self.layout = layout
        self.args = args
        self.inputs = set(inputs)
        self.helpers: set[str] = set()
        self.done: dict[tuple[str, str], str] = {}  # (value, context suffix) -> expression name
        self.decomposed: set[tuple[str, int]] = set()
        self.hoisted: set[str] = set()
        self.names = {n: safe_name(n) for n in [*nodes, *inputs]}
        # (table, index, axes, context suffix) -> the variable holding that lookup: lowering
        # gives each reader its own copy of a lookup, loaded once per kernel here
        self.lookups: dict[tuple[str, str, tuple[int | None, ...], str], str] = {}
        self.prelude: list[str] = []  # statements fixed per program: placed before any loop

    def new_scope(self) -> None:
        """Forget values computed inside the previous loop (a new pass recomputes them)."""
        self.done = {k: v for k, v in self.done.items() if self.row_level(k[0], None) and not k[1]}
        self.lookups.clear()
        self.decomposed = {k for k in self.decomposed if k[0] in self.hoisted}

    # -- values -----------------------------------------------------------------------------

    def row_level(self, name: str, ctx: Context | None) -> bool:
        """The value does not vary along any vector group that is reduced (here: it can be
        computed once, outside loops over the reduced dimensions)."""
        return not self.layout.is_full(name) if name in self.layout.axes else True

    def key(self, name: str, ctx: Context) -> tuple[str, str]:
        return (name, "" if self.row_level(name, ctx) else ctx.suffix)

    def value(self, name: str, ctx: Context, out: list[str]) -> str:
        """The expression holding ``name`` in ``ctx``; appends the statements it needs."""
        key = self.key(name, ctx)
        if key in self.done:
            return self.done[key]
        if self.graph.has_node(name):
            node = self.graph.node(name)
            if node.kind == "sym":
                expr = self.args.scalar(self.names.get(name, safe_name(name)), name)
                self.done[key] = expr
                return expr
            if node.target in CONSTS and node.out.rank == 0:
                value = (
                    node.args[0] if node.target == "aten.scalar_tensor.default" else node.args[1]
                )
                self.done[key] = literal(value)
                return self.done[key]
        if name in self.inputs or not self.graph.has_node(name):
            expr = self.load(name, ctx, out)
        else:
            expr = self.compute(self.graph.node(name), ctx, out)
        self.done[key] = expr
        return expr

    def var(self, name: str, ctx: Context) -> str:
        base = self.names.get(name, safe_name(name))
        suffix = "" if self.row_level(name, ctx) else ctx.suffix
        return f"{base}{suffix}"

    def compute(self, node: Node, ctx: Context, out: list[str]) -> str:
        kind = classify(node)
        if kind == "view":
            src = node.args[0]
            assert isinstance(src, Ref)
            return self.value(src.name, ctx, out)
        if kind == "pointwise":
            operands = [self.operand(a, ctx, out) for a in self.pointwise_args(node)]
            expr = self.pointwise_expr(node, operands)
            for helper in HELPERS:
                if f"{helper}(" in expr:
                    self.helpers.add(helper)
            name = self.var(node.name, ctx)
            if expr == operands[0] and isinstance(node.args[0], Ref):
                return expr  # clone/alias: no statement
            out.append(f"{name} = {expr}")
            return name
        if kind == "lookup":
            return self.lookup(node, ctx, out)
        if kind == "index":
            return self.index_range(node, ctx, out)
        raise NotImplementedError(f"{node.name}: {node.target} is computed by the schedule")

    def index_range(self, node: Node, ctx: Context, out: list[str]) -> str:
        """``arange(start, end, step)``: element i is ``start + i * step``, i the index along the
        domain dimension the range lies on (its length is that dimension's, as broadcasting
        requires). An int64 range is computed in 64 bits, as PyTorch computes what follows it
        (a product of positions can pass the kernel's 32-bit index)."""
        found = index_range(node)
        assert found is not None
        start, step = found
        (d,) = self.layout.axes[node.name]
        if d is None:  # one element
            return literal(start)
        g = next((g for g in ctx.groups if d in g.dims), None)
        if g is None:
            raise NotImplementedError(f"{node.name}: domain dim {d} has no index here")
        i = self.dim_index(g, d, out)
        if self.graph.meta(node.name).dtype == "int64":
            i = f"{i}.to(tl.int64)"
        name = self.var(node.name, ctx)
        value = i if (start, step) == (0, 1) else f"{start} + {step} * {i}"
        out.append(f"{name} = {value}  # {node.target}: start + i * step")
        return name

    def lookup(self, node: Node, ctx: Context, out: list[str]) -> str:
        """``table[index]``: load the index, then the table's rows at it. A negative index
        counts from the end (as in PyTorch); an index out of range reads 0 where PyTorch
        raises (a kernel cannot raise; the load stays inside the table)."""
        table, index = node.args[0], lookup_index(node)
        assert isinstance(table, Ref) and index is not None
        axes = self.layout.axes[node.name]
        key = (table.name, index.name, axes, "" if self.row_level(node.name, ctx) else ctx.suffix)
        if key in self.lookups:
            return self.lookups[key]
        i = self.value(index.name, ctx, out)
        tm, k = self.graph.meta(table.name), self.graph.meta(index.name).rank
        tname = self.names.get(table.name, safe_name(table.name))
        ptr = self.args.pointer(tname)
        n_rows = self.args.scalar(f"{tname}_rows", f"{tname}.shape[0]")
        stride0 = self.args.scalar(f"{tname}_stride0", f"{tname}.stride(0)", tm.strides[0])
        var = self.var(node.name, ctx)
        trailing = axes[k:]
        strides = {d: 0 for d in range(len(self.layout.hint))}
        for j, a in enumerate(trailing):
            if a is not None:
                strides[a] = int(tm.strides[1 + j])
        offset = self.offset_terms(tname, trailing, strides, ctx, out, first_dim=1)
        mask = self.mask_for(node.name, ctx)
        out.append(
            f"{var}_row = tl.where({i} < 0, {i} + {n_rows}, {i})  # the table row (negative: "
            "from the end)"
        )
        inside = f"({var}_row >= 0) & ({var}_row < {n_rows})"
        loc = f"{ptr} + {var}_row * {stride0}" + (f" + {offset}" if offset else "")
        conv = ".to(tl.float32)" if tm.is_float else ""
        full = f"{mask} & {inside}" if mask else inside
        out.append(f"{var} = tl.load({loc}, mask={full}, other=0){conv}")
        self.lookups[key] = var
        return var

    def pointwise_args(self, node: Node) -> tuple[Arg, ...]:
        """The operands to compute: mish's tanh(softplus(x)) needs only x (the softplus chain
        is then never printed unless something else reads it)."""
        x = tanh_of_softplus(node, self.graph)
        return (x,) if x is not None else node.args

    def pointwise_expr(self, node: Node, operands: list[str]) -> str:
        if tanh_of_softplus(node, self.graph) is not None:
            return f"_tanh_softplus({operands[0]})"
        return POINTWISE[node.target](operands, node)

    def operand(self, a: Arg, ctx: Context, out: list[str]) -> str:
        if isinstance(a, Ref):
            return self.value(a.name, ctx, out)
        if isinstance(a, bool | int | float):
            return literal(a)
        if a is None:
            return "None"
        return repr(a)

    # -- memory -----------------------------------------------------------------------------

    def load(self, name: str, ctx: Context, out: list[str], other: str = "0") -> str:
        """Load input ``name`` over the context's index groups (per-row inputs: in the prelude)."""
        if self.hoist and self.row_level(name, ctx) and not ctx.suffix:
            out = self.prelude
        meta = self.graph.meta(name)
        ptr = self.args.pointer(self.names.get(name, safe_name(name)))
        if self.sliced_view(name):
            self.args.strided.add(self.names.get(name, safe_name(name)))
        offset = self.offset(name, ctx, out)
        mask = self.mask_for(name, ctx)
        conv = ".to(tl.float32)" if meta.is_float else ""
        loc = f"{ptr} + {offset}" if offset else ptr
        var = self.var(name, ctx)
        if self.one_value_a_row(name, ctx):
            self.helpers.add("_load_col")
            out.append(f"{var} = _load_col({loc}, {mask or 'None'}, {other}){conv}")
        elif self.column_vectors and self.one_value_a_column(name, ctx):
            self.helpers.add("_load_row")
            out.append(f"{var} = _load_row({loc}, {mask or 'None'}, {other}, "
                       f"{self.column_vectors}){conv}")
        elif mask:
            out.append(f"{var} = tl.load({loc}, mask={mask}, other={other}){conv}")
        else:
            out.append(f"{var} = tl.load({loc}){conv}")
        return var

    def one_value_a_row(self, name: str, ctx: Context) -> bool:
        """Whether ``name`` varies along a 2-D tile's rows (axis 0) alone: a [M, 1] load."""
        varies = self.varies(name)
        tile = {g.axis for g in ctx.groups if g.axis is not None}
        along = {g.axis for g in ctx.groups if g.axis is not None and varies & set(g.dims)}
        return tile == {0, 1} and along == {0}

    def one_value_a_column(self, name: str, ctx: Context) -> bool:
        """Whether ``name`` varies along a 2-D tile's columns (axis 1) alone: a [1, N] load."""
        varies = self.varies(name)
        tile = {g.axis for g in ctx.groups if g.axis is not None}
        along = {g.axis for g in ctx.groups if g.axis is not None and varies & set(g.dims)}
        return tile == {0, 1} and along == {1}

    def store(
        self, name: str, target: str, ctx: Context, out: list[str], contiguous: bool = True
    ) -> None:
        """Store value ``name`` into the output tensor ``target`` (same axes as ``name``;
        ``contiguous``: the wrapper allocated it, so its strides are row-major)."""
        expr = self.value(name, ctx, out)
        ptr = self.args.pointer(target)
        offset = self.offset(name, ctx, out, tensor=target, contiguous=contiguous)
        mask = self.mask_for(name, ctx)
        literal_value = expr[0].isdigit() or expr.startswith(("-", "float(", "True", "False"))
        if offset:
            loc = f"{ptr} + {offset}"
        elif (
            not literal_value
            and self.varies(name) == frozenset()
            and any(g.axis is not None for g in ctx.groups)
        ):
            loc = f"{ptr} + tl.zeros_like({expr}).to(tl.int32)"  # a [1, 1] result: a block pointer
        else:
            loc = ptr
        value = expr if literal_value else f"{expr}.to({ptr}.dtype.element_ty)"
        if mask:
            out.append(f"tl.store({loc}, {value}, mask={mask})")
        else:
            out.append(f"tl.store({loc}, {value})")

    def store_cat(self, name: str, target: str, ctx: Context, out: list[str]) -> None:
        """Write each piece of ``cat(pieces, dim)`` into its slice of the output ``target``."""
        node = self.graph.node(name)
        pieces = node.args[0]
        assert isinstance(pieces, tuple)
        rank = self.graph.meta(name).rank
        dim = int(node.args[1]) % rank if len(node.args) > 1 else 0  # type: ignore[arg-type]
        a = self.layout.axes[name][dim]
        assert a is not None
        ptr = self.args.pointer(target)
        offset = self.offset(name, ctx, out, tensor=target, contiguous=True)
        seen = self._domain_strides(name, None)[a]
        stride = self.args.scalar(f"{target}_stride{dim}", f"{target}.stride({dim})", seen)
        mask = self.mask_for(name, ctx)
        out.append(f"# the {len(pieces)} pieces of the concatenation, each into its slice")
        for i, p in enumerate(pieces):
            assert isinstance(p, Ref)
            expr = self.value(p.name, ctx, out)
            shift = f" + {i} * {self.dim_size(a)} * {stride}" if i else ""
            loc = f"{ptr} + {offset}{shift}" if offset else f"{ptr}{shift}"
            value = f"{expr}.to({ptr}.dtype.element_ty)"
            out.append(
                f"tl.store({loc}, {value}, mask={mask})" if mask else f"tl.store({loc}, {value})"
            )

    def varies(self, name: str) -> frozenset[int]:
        return self.layout.varies(name)

    def mask_for(self, name: str, ctx: Context) -> str:
        v = self.varies(name)
        masks = [g.mask for g in ctx.groups if g.mask and v & set(g.dims)]
        return " & ".join(dict.fromkeys(masks))

    def offset(
        self,
        name: str,
        ctx: Context,
        out: list[str],
        tensor: str | None = None,
        contiguous: bool = False,
    ) -> str:
        """``index * stride`` terms for ``tensor`` (default: ``name``) laid out like ``name``."""
        tensor = tensor or self.names.get(name, safe_name(name))
        axes = self.layout.axes[name]
        meta = self.graph.meta(name)
        strides = self._domain_strides(name, None if contiguous else meta.strides)
        merge = contiguous or not self.sliced_view(name)
        return self.offset_terms(
            tensor, axes, strides, ctx, out, merge=merge, merge_tail=contiguous
        )

    def sliced_view(self, name: str) -> bool:
        """Whether ``name`` is a view PyTorch makes between kernels (a slice, a transpose...),
        or a reshape of one: its strides follow its base's sizes, so dims that chain at capture
        (``buf[:T, :T]`` with T the buffer's size) need not chain at another call's size."""
        while self.graph.has_node(name):
            node = self.graph.node(name)
            if node.target in FORWARD_VIEWS:
                return True
            if node.target not in VIEWS or not node.args or not isinstance(node.args[0], Ref):
                return False
            name = node.args[0].name
        return False

    def offset_terms(
        self,
        tensor: str,
        axes: Sequence[int | None],
        strides: dict[int, int],
        ctx: Context,
        out: list[str],
        first_dim: int = 0,
        merge: bool = True,
        merge_tail: bool = False,
    ) -> str:
        """The offset terms of ``tensor``, whose dimensions from ``first_dim`` on lie along the
        domain dimensions ``axes`` with ``strides`` (domain dim -> stride at capture);
        ``merge``: an index group whose dims chain at capture is indexed with one stride (not
        for a view whose strides may not chain at another size); ``merge_tail``: the tensor is
        one the wrapper allocated (row-major whatever the call's sizes), so innermost dims
        whose strides chain may be indexed as one run."""
        terms: list[str] = []
        for g in ctx.groups:
            dims = [d for d in g.dims if d in set(a for a in axes if a is not None)]
            if not dims:
                continue
            if merge and self.mergeable(strides, g.dims):
                inner = max(dims, key=lambda d: g.dims.index(d))
                k = first_dim + list(axes).index(inner)
                stride = self.args.scalar(
                    f"{tensor}_stride{k}", f"{tensor}.stride({k})", strides[inner]
                )
                terms.append(f"{g.index} * {stride}")
                continue
            # in an output the wrapper allocated, the innermost dims whose strides chain (NCHW's
            # rows and columns under an index of images x rows x columns) are one run: indexed
            # together, so the run's contiguity is their joint size's, not the innermost dim's
            # alone (wider vector stores); an input's strides at capture may not chain at run time
            tail = self.merged_tail(strides, g.dims, dims) if merge_tail else ()
            if tail:
                inner = tail[-1]
                k = first_dim + list(axes).index(inner)
                stride = self.args.scalar(
                    f"{tensor}_stride{k}", f"{tensor}.stride({k})", strides[inner]
                )
                terms.append(f"{self.run_index(g, tail, out)} * {stride}")
            for d in dims:
                if d in tail:
                    continue
                idx = self.dim_index(g, d, out)
                k = first_dim + list(axes).index(d)
                stride = self.args.scalar(
                    f"{tensor}_stride{k}", f"{tensor}.stride({k})", strides[d]
                )
                terms.append(f"{idx} * {stride}")
        return " + ".join(terms)

    def _domain_strides(self, name: str, strides: Sequence[int] | None) -> dict[int, int]:
        """Domain dim -> stride (0 when not varying), at the capture hints; outputs written by
        the wrapper are contiguous in their own shape."""
        axes = self.layout.axes[name]
        meta = self.graph.meta(name)
        if strides is None:
            from kernelwright.design.builder import contiguous_strides

            strides = contiguous_strides(meta.hint)
        found = {a: int(strides[k]) for k, a in enumerate(axes) if a is not None}
        return {d: found.get(d, 0) for d in range(len(self.layout.hint))}

    def mergeable(self, strides: dict[int, int], dims: Sequence[int]) -> bool:
        """Whether a tensor with ``strides`` can index the flattened ``dims`` with one stride."""
        for a, b in zip(dims, dims[1:], strict=False):
            if strides[a] != strides[b] * self.layout.hint[b]:
                return False
        return True

    def merged_tail(
        self, strides: dict[int, int], dims: Sequence[int], present: Sequence[int]
    ) -> tuple[int, ...]:
        """The longest run of at least two innermost ``dims`` (all ``present``) that a tensor
        with ``strides`` indexes with one stride; empty when there is none."""
        for start in range(1, len(dims) - 1):
            tail = tuple(dims[start:])
            if all(d in present for d in tail) and self.mergeable(strides, tail):
                return tail
        return ()

    def run_index(self, g: IndexGroup, tail: Sequence[int], out: list[str]) -> str:
        """The flat index over ``g``'s innermost dims ``tail`` (see :meth:`merged_tail`)."""
        name = f"{g.index}_run{tail[0]}"
        if (g.index, -1 - tail[0]) in self.decomposed:
            return name
        self.decomposed.add((g.index, -1 - tail[0]))
        if g.hoist:
            self.hoisted.add(g.index)
            out = self.prelude
        vector = len(self.layout.hint) - 1 in g.dims
        sizes = " * ".join(self.dim_size(x, vector) for x in tail)
        out.append(f"{name} = {g.index} % ({sizes})  # index along domain dims {tail}")
        return name

    def dim_index(self, g: IndexGroup, d: int, out: list[str]) -> str:
        """The index of domain dimension ``d`` recovered from ``g``'s flat index."""
        if len(g.dims) == 1:
            return g.index
        name = f"{g.index}_{d}"
        if (g.index, d) in self.decomposed:
            return name
        self.decomposed.add((g.index, d))
        if g.hoist:
            self.hoisted.add(g.index)
            out = self.prelude
        pos = g.dims.index(d)
        inner = g.dims[pos + 1 :]
        expr = g.index
        # along the innermost domain dimension (vector loads) the sizes bound contiguous runs
        vector = len(self.layout.hint) - 1 in g.dims
        if inner:
            sizes = " * ".join(self.dim_size(x, vector) for x in inner)
            expr = f"({expr} // ({sizes}))" if len(inner) > 1 else f"({expr} // {sizes})"
        if pos > 0:
            expr = f"{expr} % {self.dim_size(d, vector)}"
        out.append(f"{name} = {expr}  # index along domain dim {d}")
        return name

    def dim_size(self, d: int, aligned: bool = True) -> str:
        """The kernel argument holding the size of domain dimension ``d``; ``aligned``: it
        bounds runs of contiguous elements (a ``%`` of a flat index along the innermost
        dimension, a block loop's extent), so it gets an alignment hint (KernelArgs.hint)."""
        return self.args.scalar(f"dim{d}", f"dim{d}", self.layout.hint[d] if aligned else None)

    def helper_sources(self) -> list[str]:
        """The @triton.jit helpers used, in a stable order."""
        return [HELPERS[h] for h in sorted(self.helpers)]

    def compute_dtype(self, name: str) -> str:
        """Triton dtype a value is computed in."""
        return compute_dtype(self.graph.meta(name).dtype)


def safe_name(name: str) -> str:
    """A node name usable as a Triton variable."""
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if not clean or clean[0].isdigit():
        clean = f"v_{clean}"
    if clean in RESERVED or clean.startswith(("acc_", "dim", "sel_")):
        clean = f"{clean}_v"
    return clean
