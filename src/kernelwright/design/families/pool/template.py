"""Pooling kernels: max and average pooling over 1, 2 or 3 spatial dimensions.

Pooling is memory-bound, and its cost on a GPU is the number of load requests per output more
than the bytes: a window of k taps loaded tap by tap asks the L1 for every input element k
times (stride-2 taps also touch twice the lines they use). The kernel therefore loads each input
row of its tile once, as aligned vectors, and computes every tap from registers:

width    each thread owns ``V = 4 / gcd(stride, 4)`` adjacent outputs, whose ``V * stride``
         inputs are whole aligned 4-element vectors (one vector for strides 1, 2 and 4, so a
         warp's loads are contiguous); the few halo elements of the neighbouring chunks are
         narrow loads; the window of each output is a max/sum of named elements (``tl.split`` of
         the vectors, in registers), and the V outputs go back as one vector store
rolling  the outer pooled axis (H for 2-D, D for 3-D) is walked ``STEPS`` outputs per program,
         unrolled: an input row (or slice) shared by overlapping windows is loaded and reduced
         along W once, then combined into every output that needs it
batch    the tile's ``ROWS`` axis: planes for 1-D and 2-D pooling (the grid walks the rest), output
         rows for 3-D pooling (each loads its H taps; the L1 serves their overlap)

The unrolled program grows with the window: a program's loads are its input rows (the rolling
offsets its ``STEPS`` outputs read, times the batch taps) times the loads of a row. Past
``MAX_UNROLLED_LOADS`` Triton's compile time runs into minutes (11 x 11 windows at 8 steps: 968
loads, not compiled in 300 s), so ``STEPS`` is halved until the program fits; a window that
does not fit even at one step has no kernel here (DesignError: PyTorch keeps it).

Every load is issued before the first store (a store may alias a later load, so the compiler
could not hoist loads past it), which keeps a program's whole tile of loads in flight. Padding
reads as -inf for max pooling (which propagates NaN, as PyTorch does); average pooling divides
by exactly the count PyTorch uses (``count_include_pad``, ``divisor_override``, ``ceil_mode``).
Sizes and strides come from the runtime tensors, so one file serves any input shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from math import gcd
from typing import Any

from kernelwright.design.fusion import Group
from kernelwright.design.graph import Node, OpGraph, Ref
from kernelwright.design.kernel.common import Code, DesignError, RenderedKernel, signature
from kernelwright.design.kernel.emitter import KernelArgs, safe_name

DEFAULTS = {"BLOCK_W": 128, "ROWS": 4, "STEPS": 4, "WARPS": 8}
VECTOR = 4  # fp32 elements in one 16-byte load
# Loads of one unrolled program at most: the largest that compiled promptly (3-D windows of
# 3 x 3 x 3 at 8 steps: 171) with some room; a 2-D 11 x 11 window at 8 steps has 968
MAX_UNROLLED_LOADS = 192


@dataclass(frozen=True, slots=True)
class PoolSpec:
    """What the pooling op computes (per spatial dimension: kernel, stride, padding, dilation)."""

    kind: str  # "max" | "avg"
    nsp: int
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    ceil_mode: bool
    count_include_pad: bool = True
    divisor_override: int | None = None


@dataclass(frozen=True, slots=True)
class Window:
    """The window along one axis of the tile (an axis that is not pooled has the unit window)."""

    k: int = 1
    s: int = 1
    p: int = 0
    dil: int = 1

    def taps(self, out: int) -> list[int]:
        """Input offsets read by output ``out``, relative to output 0's window start."""
        return [out * self.s + kk * self.dil for kk in range(self.k)]


def _ints(v: Any, n: int, default: int | None = None) -> tuple[int, ...]:
    if v is None or v == ():
        if default is None:
            raise DesignError("missing pooling argument")
        return (default,) * n
    if isinstance(v, int):
        return (v,) * n
    vals = tuple(int(x) for x in v)  # type: ignore[union-attr]
    return vals * n if len(vals) == 1 else vals


def pool_spec(node: Node) -> PoolSpec:
    """Read a pooling node's arguments."""
    t, a = node.target, node.args
    if t in ("aten.max_pool2d_with_indices.default", "aten.max_pool3d_with_indices.default"):
        n = 2 if "2d" in t else 3
        k = _ints(a[1], n)
        s = _ints(a[2] if len(a) > 2 else None, n, 0) if len(a) > 2 and a[2] else k
        return PoolSpec(
            "max",
            n,
            k,
            s,
            _ints(a[3] if len(a) > 3 else 0, n, 0),
            _ints(a[4] if len(a) > 4 else 1, n, 1),
            bool(a[5]) if len(a) > 5 else False,
        )
    if t in ("aten.avg_pool1d.default", "aten.avg_pool2d.default", "aten.avg_pool3d.default"):
        n = {"1d": 1, "2d": 2, "3d": 3}[t.split("_pool")[1][:2]]
        k = _ints(a[1], n)
        s = _ints(a[2], n) if len(a) > 2 and a[2] else k
        return PoolSpec(
            "avg",
            n,
            k,
            s,
            _ints(a[3] if len(a) > 3 else 0, n, 0),
            (1,) * n,
            bool(a[4]) if len(a) > 4 else False,
            bool(a[5]) if len(a) > 5 else True,
            int(a[6]) if len(a) > 6 and a[6] is not None else None,  # type: ignore[arg-type]
        )
    raise DesignError(f"no pooling template for {t}")


@dataclass(frozen=True, slots=True)
class Tile:
    """The tile's three axes (batch, rolling, width) and the width axis' vector plan.

    Attributes:
        nsp: pooled dimensions (leading ones with a unit window are folded into the planes).
        batch: window along the ROWS axis (H for 3-D pooling, the unit window over planes).
        roll: window along the unrolled axis (D for 3-D, H for 2-D; unused for 1-D).
        width: window along W.
        vec: outputs per thread chunk (``vec * width.s`` inputs: a multiple of 4).
        pieces: the aligned loads (offset, width) covering a chunk's taps, relative to
            its first input.
    """

    nsp: int
    batch: Window
    roll: Window
    width: Window
    vec: int
    pieces: tuple[tuple[int, int], ...]

    @property
    def rolls(self) -> bool:
        """The tile has an unrolled axis (2-D and 3-D pooling)."""
        return self.nsp >= 2

    @property
    def batch_pooled(self) -> bool:
        """The ROWS axis is a pooled dimension (H of 3-D pooling), not planes."""
        return self.nsp == 3

    @property
    def span(self) -> int:
        """Inputs between the first inputs of adjacent chunks."""
        return self.vec * self.width.s

    def slices(self, steps: int) -> list[int]:
        """Rolling-axis input offsets the ``steps`` outputs read (relative to the first start)."""
        return sorted({t for u in range(steps) for t in self.roll.taps(u)})


def plan_tile(spec: PoolSpec) -> Tile:
    """Assign the pooled dimensions to the tile's axes and plan the width axis' loads."""
    dims = zip(spec.kernel, spec.stride, spec.padding, spec.dilation, strict=True)
    w = [Window(k, s, p, d) for k, s, p, d in dims]
    if spec.nsp == 3:
        batch, roll, width = w[1], w[0], w[2]
    elif spec.nsp == 2:
        batch, roll, width = Window(), w[0], w[1]
    else:
        batch, roll, width = Window(), Window(), w[0]
    # V outputs per chunk so that a chunk's inputs are whole aligned vectors
    vec = VECTOR // gcd(width.s, VECTOR)
    need = {t - width.p for j in range(vec) for t in width.taps(j)}
    return Tile(spec.nsp, batch, roll, width, vec, _pieces(need))


def fold_unit_windows(spec: PoolSpec) -> PoolSpec:
    """Drop leading pooled dimensions whose window is one element (a 1-D pooling arrives as a
    2-D one over a size-1 H): they are planes, with output size = input size."""
    drop = 0
    while drop < spec.nsp - 1 and (
        spec.kernel[drop],
        spec.stride[drop],
        spec.padding[drop],
        spec.dilation[drop],
    ) == (1, 1, 0, 1):
        drop += 1
    return replace(
        spec,
        nsp=spec.nsp - drop,
        kernel=spec.kernel[drop:],
        stride=spec.stride[drop:],
        padding=spec.padding[drop:],
        dilation=spec.dilation[drop:],
    )


def _pieces(need: set[int]) -> tuple[tuple[int, int], ...]:
    """One aligned load per 4-element block holding needed offsets, as narrow as those offsets
    allow: a halo element of the neighbouring chunk costs a scalar load, not a vector."""
    out = []
    for block in sorted({o // VECTOR for o in need}):
        held = [o for o in need if o // VECTOR == block]
        lo, hi = min(held), max(held)
        width = 1 if lo == hi else 2 if lo // 2 == hi // 2 else VECTOR
        out.append((lo - lo % width, width))
    return tuple(out)


def _name(o: int) -> str:
    """An offset as part of a variable name (``m1`` for -1)."""
    return f"m{-o}" if o < 0 else str(o)


class _Body:
    """Writes the kernel body: loads and width reductions per input row, then the outputs."""

    def __init__(self, spec: PoolSpec, tile: Tile, steps: int) -> None:
        self.spec = spec
        self.tile = tile
        self.steps = steps
        self.code = Code()
        self.code.indent()
        self.max = spec.kind == "max"
        self.fill = '-float("inf")' if self.max else "0.0"

    def combine(self, terms: list[str]) -> str:
        """Max (NaN-propagating, as PyTorch's pooling) or sum of ``terms``."""
        if not self.max:
            return " + ".join(terms)
        expr = terms[0]
        for t in terms[1:]:
            expr = f"tl.maximum({expr}, {t}, propagate_nan=tl.PropagateNan.ALL)"
        return expr

    def program(self) -> None:
        """Which tile this program owns: scalar decomposition of the program id (once per
        program, never per element), and the index vectors of its chunks and rows."""
        t = self.tile
        c = self.code
        c.add("pid = tl.program_id(0)", "wb = pid % n_wb", "rest = pid // n_wb")
        if t.rolls:
            c.add("rb = rest % n_rb", "rest = rest // n_rb")
        c.add("bb = rest % n_bb")
        if t.batch_pooled:
            c.add("plane = rest // n_bb")
            c.add("x_plane = x_ptr + plane.to(tl.int64) * x_sp")
            c.add("y_plane = y_ptr + plane.to(tl.int64) * y_sp")
        else:
            c.add("x_plane = x_ptr", "y_plane = y_ptr")
        c.add(
            "q = wb * N + tl.arange(0, N)[None, :]  # [1, N] chunks of V adjacent outputs",
            "b = bb * ROWS + tl.arange(0, ROWS)[:, None]  # [ROWS, 1] tile rows",
            "b_ok = b < OB",
        )
        if t.rolls:
            c.add(f"r0 = rb * {self.steps}  # first output of this program along the rolled axis")
        c.add(f"# the chunk's input vectors and halo elements (aligned: chunks are {t.span} apart)")
        for off, width in t.pieces:
            name = f"c{_name(off)}"
            lane = f" + tl.arange(0, {width})[None, None, :]" if width > 1 else ""
            shape = "[:, :, None]" if width > 1 else ""
            shift = f" {'-' if off < 0 else '+'} {abs(off)}" if off else ""
            c.add(f"{name} = q{shape} * {t.span}{shift}{lane}")
            lo = f"({name} >= 0) & " if off < 0 else ""
            c.add(f"{name}_ok = {lo}({name} < IW)")

    def row(self, tag: str, roll_index: str | None, kb: int) -> list[str]:
        """Load one input row of the tile (a rolling offset and a batch tap) and reduce each
        chunk's V windows along W: the names of the V reduced values."""
        t = self.tile
        c = self.code
        ib = "b" if not t.batch_pooled else f"(b * {t.batch.s} - {t.batch.p} + {kb * t.batch.dil})"
        ok = ["b_ok"]
        if t.batch_pooled:
            c.add(f"ib{tag} = {ib}")
            ok.append(f"(ib{tag} >= 0) & (ib{tag} < IB)")
            ib = f"ib{tag}"
        offset = f"{ib}.to(tl.int64) * x_sb"
        if roll_index is not None:
            ok.append(f"({roll_index} >= 0) & ({roll_index} < IR)")
            offset += f" + {roll_index} * x_sr"
        c.add(
            f"row{tag} = x_plane + {offset}  # [ROWS, 1] row starts", f"ok{tag} = {' & '.join(ok)}"
        )
        elems: dict[int, str] = {}
        for off, width in t.pieces:
            v = f"v{tag}_{_name(off)}"
            ptr = f"row{tag}[:, :, None]" if width > 1 else f"row{tag}"
            mask = f"ok{tag}[:, :, None]" if width > 1 else f"ok{tag}"
            c.add(
                f"{v} = tl.load({ptr} + c{_name(off)}, mask={mask} & c{_name(off)}_ok, "
                f"other={self.fill}).to(tl.float32)"
            )
            elems.update(self.split(v, off, width))
        names = []
        for j in range(t.vec):
            terms = [elems[o - t.width.p] for o in t.width.taps(j)]
            names.append(f"w{tag}_{j}")
            c.add(f"{names[-1]} = {self.combine(terms)}")
        return names

    def split(self, v: str, off: int, width: int) -> dict[int, str]:
        """A loaded [ROWS, N, width] vector as ``width`` [ROWS, N] tensors (register moves)."""
        if width == 1:
            return {off: v}
        if width == 2:
            self.code.add(f"{v}_0, {v}_1 = tl.split({v})")
            return {off: f"{v}_0", off + 1: f"{v}_1"}
        self.code.add(
            f"{v}_a, {v}_b = tl.split(tl.reshape({v}, [ROWS, N, 2, 2]))",
            f"{v}_0, {v}_2 = tl.split({v}_a)",
            f"{v}_1, {v}_3 = tl.split({v}_b)",
        )
        return {off + i: f"{v}_{i}" for i in range(4)}

    def slice_values(self, roll_offset: int | None) -> list[str]:
        """Every batch tap of one rolling offset, combined: the V partial windows per chunk."""
        t = self.tile
        tag = "" if roll_offset is None else f"{roll_offset}"
        index = None
        if roll_offset is not None:
            index = f"ir{tag}"
            self.code.add(f"{index} = r0 * {t.roll.s} - {t.roll.p} + {roll_offset}")
        rows = [self.row(f"{tag}_{kb}", index, kb) for kb in range(t.batch.k)]
        if len(rows) == 1:
            return rows[0]
        names = []
        for j in range(t.vec):
            names.append(f"s{tag}_{j}")
            self.code.add(f"{names[-1]} = {self.combine([r[j] for r in rows])}")
        return names

    def outputs(self) -> None:
        """Load every input row, then combine and store each output step."""
        t = self.tile
        c = self.code
        c.add("# every input row of the tile, loaded once and reduced along W")
        if t.rolls:
            partial = {o: self.slice_values(o) for o in t.slices(self.steps)}
            per_step = [
                [[partial[o][j] for o in t.roll.taps(u)] for j in range(t.vec)]
                for u in range(self.steps)
            ]
        else:
            values = self.slice_values(None)
            per_step = [[[values[j]] for j in range(t.vec)]]
        c.add("# the outputs, stored after every load (stores would fence later loads)")
        c.add(
            "oc = q[:, :, None] * V + tl.arange(0, V)[None, None, :]  # output columns"
            if t.vec > 1
            else "oc = q  # output columns"
        )
        c.add("oc_ok = oc < OW")
        if self.spec.kind == "avg":
            self.divisor_factors()
        for u, terms in enumerate(per_step):
            outs = []
            for j, group in enumerate(terms):
                expr = self.combine(group)
                if self.spec.kind == "avg":
                    expr = f"({expr}) * ({self.scale(u, j)})"
                outs.append(f"o{u}_{j}")
                c.add(f"{outs[-1]} = {expr}")
            self.store(u, outs)

    def store(self, u: int, outs: list[str]) -> None:
        """One output step: the V outputs of each chunk joined into one vector store."""
        c = self.code
        value = outs[0]
        if len(outs) == 2:
            value = f"tl.join({outs[0]}, {outs[1]})"
        elif len(outs) == 4:
            value = (
                f"tl.reshape(tl.join(tl.join({outs[0]}, {outs[2]}), "
                f"tl.join({outs[1]}, {outs[3]})), [ROWS, N, 4])"
            )
        rows, ok = "b.to(tl.int64) * y_sb", "b_ok"
        if self.tile.rolls:
            c.add(f"or{u} = r0 + {u}")
            rows += f" + or{u} * y_sr"
            ok += f" & (or{u} < OR)"
        expand = "[:, :, None]" if self.tile.vec > 1 else ""
        c.add(
            f"tl.store((y_plane + {rows}){expand} + oc, "
            f"{value}.to(y_ptr.dtype.element_ty), mask=({ok}){expand} & oc_ok)"
        )

    def divisor_factors(self) -> None:
        """PyTorch's average-pooling divisor is a product of one count per axis (the taps inside
        the padded input with ``count_include_pad``, else inside the input): one reciprocal per
        axis and position, so each output costs two multiplies instead of a division."""
        spec, t, c = self.spec, self.tile, self.code
        if spec.divisor_override is not None:
            return
        for j in range(t.vec):
            start = f"(q * V + {j}) * {t.width.s} - {t.width.p}"
            c.add(f"inv_w{j} = 1.0 / {self._count(start, t.width, 'IW')}")
        if t.batch_pooled:
            c.add(f"inv_b = 1.0 / {self._count(f'b * {t.batch.s} - {t.batch.p}', t.batch, 'IB')}")
        if t.rolls:
            for u in range(self.steps):
                start = f"(r0 + {u}) * {t.roll.s} - {t.roll.p}"
                c.add(f"inv_r{u} = 1.0 / {self._count(start, t.roll, 'IR')}")

    def _count(self, start: str, w: Window, size: str) -> str:
        return divisor_count(start, w, size, self.spec.count_include_pad)

    def scale(self, u: int, j: int) -> str:
        """The reciprocal of output (u, j)'s divisor."""
        if self.spec.divisor_override is not None:
            return str(1.0 / self.spec.divisor_override)
        factors = [f"inv_w{j}"]
        if self.tile.batch_pooled:
            factors.append("inv_b")
        if self.tile.rolls:
            factors.append(f"inv_r{u}")
        return " * ".join(factors)


def divisor_count(start: str, w: Window, size: str, include_pad: bool) -> str:
    """Kernel expression: the taps PyTorch's average pooling counts along one axis for windows
    starting at ``start`` (an input of ``size`` elements): those inside the padded input with
    ``count_include_pad``, else those inside the input."""
    end = f"tl.minimum({start} + {w.k}, {size} + {w.p})"
    if include_pad:
        return f"({end} - ({start}))"
    return f"(tl.minimum({end}, {size}) - tl.maximum({start}, 0))"


def pooled_group(graph: OpGraph, group: Group) -> tuple[PoolSpec, str, str]:
    """A pooling group's window (leading unit windows folded into the planes) and the names
    of its input and its pooled output."""
    node = graph.node(group.nodes[0])
    src = node.args[0]
    assert isinstance(src, Ref)
    return fold_unit_windows(pool_spec(node)), safe_name(src.name), safe_name(group.outputs[0])


def render_pool(
    graph: OpGraph, group: Group, name: str, variant: str, params: Mapping[str, Any]
) -> RenderedKernel:
    """Render a pooling group (its single pooling node and the pooled-values getitem)."""
    spec, x, y = pooled_group(graph, group)
    p = {**DEFAULTS, **params}
    tile = plan_tile(spec)
    steps = fitting_steps(tile, int(p["STEPS"]) if tile.rolls else 1)
    kname = f"{name}_kernel"
    args = KernelArgs()
    args.pointer("x")
    args.pointer("y")
    for s in _scalars(spec):
        args.scalar(s, s)
    body = _Body(spec, tile, steps)
    body.program()
    body.outputs()
    kernel = "\n".join(signature(kname, args, ["N", "V", "ROWS"]) + body.code.lines)
    wrapper = _wrapper(spec, tile, steps, p, name, kname, x, y, [s for s, _ in args.scalars])
    return RenderedKernel((kernel,), wrapper, name, (x,), (group.outputs[0],), ("_pool_out_size",))


def unrolled_loads(tile: Tile, steps: int) -> int:
    """The loads one program issues: every input row its ``steps`` outputs read (rolling
    offsets times batch taps), each loaded in ``len(tile.pieces)`` vectors."""
    rows = len(tile.slices(steps)) if tile.rolls else 1
    return rows * tile.batch.k * len(tile.pieces)


def fitting_steps(tile: Tile, steps: int) -> int:
    """``steps`` halved until a program's loads fit ``MAX_UNROLLED_LOADS``.

    Raises:
        DesignError: even one step is past the limit (the window is too large to unroll).
    """
    while steps > 1 and unrolled_loads(tile, steps) > MAX_UNROLLED_LOADS:
        steps //= 2
    if unrolled_loads(tile, steps) > MAX_UNROLLED_LOADS:
        raise DesignError(
            f"a pooling window of {unrolled_loads(tile, steps)} loads a program unrolled, past "
            f"{MAX_UNROLLED_LOADS}: too large to compile promptly")
    return steps


def _scalars(spec: PoolSpec) -> list[str]:
    """The kernel's size, stride and grid arguments (only those its axes use)."""
    names = ["IW", "OW", "OB", "x_sb", "y_sb"]
    if spec.nsp >= 2:
        names += ["IR", "OR", "x_sr", "y_sr"]
    if spec.nsp == 3:
        names += ["IB", "x_sp", "y_sp"]
    names += ["n_wb", "n_bb"] + (["n_rb"] if spec.nsp >= 2 else [])
    return names


def wrapper_head(spec: PoolSpec, name: str, x: str, y: str, how: str) -> Code:
    """A pooling wrapper's first lines: the signature and docstring (``how`` the kernel
    works), the contiguous input, the planes (``n_planes``), each pooled axis' input and output
    sizes (``ID``/``OD``, ``IH``/``OH``, ``IW``/``OW``) from the runtime tensor, and the output
    ``y``."""
    w = Code()
    w.add(f"def {name}({x}):")
    w.indent()
    w.add(f'"""{spec.kind.capitalize()} pooling over the last {spec.nsp} dimension(s): {how}."""')
    w.add(f"{x} = {x}.contiguous()  # planes are addressed as dense (..., spatial) blocks")
    w.add("# sizes come from the runtime tensors, so any input shape works")
    w.add(f"lead = {x}.shape[:-{spec.nsp}]", "n_planes = 1", "for s in lead:", "    n_planes *= s")
    dims = ["D", "H", "W"][3 - spec.nsp :]
    for i, d in enumerate(dims):
        k, s_, p_, dl = spec.kernel[i], spec.stride[i], spec.padding[i], spec.dilation[i]
        w.add(f"I{d} = {x}.shape[{i - spec.nsp}]")
        w.add(f"O{d} = _pool_out_size(I{d}, {k}, {s_}, {p_}, {dl}, {spec.ceil_mode})")
    out_shape = ", ".join(f"O{d}" for d in dims)
    w.add(f"{y} = torch.empty((*lead, {out_shape}), device={x}.device, dtype={x}.dtype)")
    return w


def _wrapper(
    spec: PoolSpec,
    tile: Tile,
    steps: int,
    p: Mapping[str, Any],
    name: str,
    kname: str,
    x: str,
    y: str,
    scalars: list[str],
) -> str:
    w = wrapper_head(spec, name, x, y, "input rows loaded once, taps from registers")
    w.add("# the tile's axes: batch rows (B), the unrolled axis (R), W")
    if spec.nsp == 3:
        w.add(
            "IB, OB, x_sb, y_sb = IH, OH, IW, OW",
            "IR, OR, x_sr, y_sr = ID, OD, IH * IW, OH * OW",
            "x_sp, y_sp, n_p = ID * IH * IW, OD * OH * OW, n_planes",
        )
    elif spec.nsp == 2:
        w.add(
            "IB, OB, x_sb, y_sb = n_planes, n_planes, IH * IW, OH * OW",
            "IR, OR, x_sr, y_sr = IH, OH, IW, OW",
            "n_p = 1",
        )
    else:
        w.add("IB, OB, x_sb, y_sb = n_planes, n_planes, IW, OW", "n_p = 1")
    w.add(
        f"V = {tile.vec}  # outputs per thread chunk: {tile.span} inputs, whole aligned vectors",
        f"BLOCK_W = max(V, min({p['BLOCK_W']}, _pow2(OW)))",
        "N = BLOCK_W // V",
        f"ROWS = min({p['ROWS']}, _pow2(OB))",
        "n_wb = _cdiv(OW, BLOCK_W)",
        "n_bb = _cdiv(OB, ROWS)",
    )
    grid = "n_wb * n_bb * n_p"
    if tile.rolls:
        w.add(f"n_rb = _cdiv(OR, {steps})  # {steps} outputs per program, unrolled")
        grid = "n_wb * n_rb * n_bb * n_p"
    w.add(
        "# at least one chunk per thread: with fewer, Triton spreads a vector over threads",
        f"warps = max(1, min({p['WARPS']}, ROWS * N // 32))",
        "_launch(",
    )
    w.indent()
    w.add(f"{kname}, ({grid},),")
    w.add(f"{x}, {y}, {', '.join(scalars)},")
    w.add("N=N, V=V, ROWS=ROWS, num_warps=warps,")
    w.dedent()
    w.add(")")
    w.add(f"return {y},")
    return w.text()


POOL_OUT_SIZE = '''def _pool_out_size(size, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's pooling output size (the last window must start inside the padded input)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out'''
