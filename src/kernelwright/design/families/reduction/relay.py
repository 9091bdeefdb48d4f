"""Relay reductions: a row's statistics split across a team of programs, its write sweep done by
a later team, so a normalisation reads each element from HBM once.

A looped normalisation (group norm, instance norm: rows of 256-512 KB) sweeps each row twice,
statistics then write, and the second sweep mostly misses L2: a program's row is read long
before it is re-read. Here each row is cut into ``n_split`` slices of ``CHUNK`` elements, one per
program, and the programs of row ``t`` (a *team*) each run two phases:

    phase 1   the statistics of slice ``slot`` of row ``t`` (per-lane accumulators, merged into
              one partial: Welford's (mean, M2, n), online softmax's (max, sum), a sum...),
              stored in a workspace; then the row's arrival count is incremented (release)
    phase 2   wait until every slice of row ``t - LAG`` has arrived (volatile loads watch the
              count, one acquiring atomic reads it before the partials), combine its
              partials, and write slice ``slot`` of row ``t - LAG``: that team read it a moment
              ago, so the re-read comes from L2. A lag of a few teams means the awaited team
              started well before, so programs rarely wait at all

A program waits only for programs that started before it: its team comes from a ticket taken
with an atomic increment when it starts (not from its program id, whose launch order the
hardware does not promise), and the team before it took its tickets earlier and increments
the count before it waits on anything. No program can wait on one that has not started, so the
relay cannot deadlock however many programs are resident; under the interpreter, which runs
programs one after another, the count is always complete when it is read. ``LAG`` teams past
the last row write the last rows; the first ``LAG`` teams' phase 2 writes nothing (masked).

Measured on an H200 it was no faster than the looped kernel at best and much slower with small
slices (``measurements.csv``): the skill is costed as two sweeps and ranked after the looped
kernel, so search and tuning can still try it where it may pay.

Only one thread of a program runs a scalar atomic, so barriers fence each side: every
thread's partial stores complete before the releasing increment, and the acquiring read
completes before any thread loads the partials (the pattern of CUTLASS's semaphores).
"""

from __future__ import annotations

from dataclasses import replace

from kernelwright.design.families.reduction.accumulate import NEG_INF, POS_INF, extreme
from kernelwright.design.families.reduction.schedule import Frame, Nest
from kernelwright.design.families.reduction.sweeps import Kernel, SweepWriter
from kernelwright.design.kernel.common import Code, DesignError, assemble
from kernelwright.design.kernel.emitter import (
    BodyEmitter,
    Context,
    IndexGroup,
    KernelArgs,
    safe_name,
)

# Each row's arrival count sits alone in a 128-byte line: waiting programs poll one count while
# others increment theirs, and counts sharing a line would serialise all of it in one L2 slice.
COUNT_STRIDE = 32


def partials(w: SweepWriter) -> list[tuple[str, str]]:
    """(workspace name, value name in phase 1) of every partial a slice stores."""
    sch, acc = w.s, w.acc
    found: list[tuple[str, str]] = []
    for r in sch.plan.reductions:
        if r in sch.plan.welford:
            continue  # the variance travels as its mean's M2
        s = safe_name(r)
        if acc.is_int(sch.src(r)):
            raise DesignError("the relay's workspace holds fp32 partials, not integer sums")
        if r in sch.plan.welford.values():
            var = next(v for v, m in sch.plan.welford.items() if m == r)
            found += [(f"ws_{s}", s), (f"ws_{s}_m2", f"{safe_name(var)}_m2")]
            found.append((f"ws_{s}_n", f"{s}_n"))
        elif sch.op(r) in ("argmax", "argmin"):
            raise DesignError("the relay combines statistics, not indices")
        else:
            found.append((f"ws_{s}", s))
    return found


def relay_kernel(w: SweepWriter, args: KernelArgs, kname: str) -> Kernel:
    """Both phases of the relay in one kernel (see the module docstring); the schedule was
    checked for it (``ReductionSchedule.build``)."""
    sch, acc = w.s, w.acc
    f = sch.frame()
    # phase 1 indexes the team's own row, phase 2 an earlier one: two index groups
    mine = replace(f, par=IndexGroup(sch.par, "rows_s", "row_mask_s", 0, hoist=True))
    em1 = sch.emitter(args)
    em2 = sch.emitter(args)
    head, code = Code(), Code()
    head.indent()
    code.indent()
    head.add(
        "# a ticket (past the counts), not the program id: a program waits only for teams",
        "# that started earlier",
        "ticket = tl.atomic_add(count_ptr + (n_rows + LAG) * COUNT_STRIDE, 1)",
        "team = ticket // n_split  # phase 1: row `team`; phase 2: row `team - LAG`",
        "slot = ticket % n_split  # which slice of those rows",
        "lo = slot * CHUNK",
        "slice_end = tl.minimum(lo + CHUNK, n_cols)",
        "slice_len = slice_end - lo",
        "rows_s = team + tl.arange(0, BLOCK_M)[:, None]",
        "row_mask_s = rows_s < n_rows  # the team past the last row only writes",
        "rows = team - LAG + tl.arange(0, BLOCK_M)[:, None]",
        "row_mask = (rows >= 0) & (rows < n_rows)  # the first teams have no row to write",
    )
    ctx1 = mine.context()
    code.add("", "# ---- phase 1: this slice's statistics of row `team`")
    slice_statistics(w, em1, mine, ctx1, code)
    for ws, value in partials(w):
        args.pointer(ws)
        code.add(f"tl.store({ws}_ptr + rows_s * n_split + slot, {value}, mask=row_mask_s)")
    code.add(
        "# release: every thread's partials are visible to whoever sees the new count",
        "tl.debug_barrier()",
        'tl.atomic_add(count_ptr + team * COUNT_STRIDE, 1, sem="release")',
        "",
        "# ---- phase 2: wait for every slice of row `team - LAG`, then write this slice",
        "need = (team >= LAG).to(tl.int32) * n_split",
        "watch = count_ptr + tl.maximum(team - LAG, 0) * COUNT_STRIDE",
        *wait_for_count(acc.helpers, "watch", "need"),
    )
    ctx2 = f.context()
    combine_partials(w, em2, ctx2, code)
    w.row_level(em2, ctx2, code, avail=1)
    nest = write_slice(w, em2, f, ctx2, code)
    clash = _assigned(em1.prelude) & _assigned(em2.prelude)
    if clash:
        raise DesignError(f"both phases hoist {sorted(clash)}: the relay cannot share them")
    acc.helpers.update(em1.helpers | em2.helpers)
    merged = BodyEmitter(sch.graph, sch.group.nodes, sch.layout, args, sch.group.inputs)
    merged.prelude = em1.prelude + em2.prelude
    sizes = [("n_rows", "n_rows"), ("n_cols", "n_cols"), ("n_split", "n_split")]
    args.pointer("count")
    args.scalars[:0] = [z for z in sizes if all(z[0] != x for x, _ in args.scalars)]
    consts = ["BLOCK_M", "BLOCK_N", "BLOCK_S", "CHUNK", "LAG", "COUNT_STRIDE"]
    consts += ["BLOCK_LO"] if nest else []
    return Kernel(assemble(kname, args, consts, head, merged, code), nest)


def slice_statistics(w: SweepWriter, em: BodyEmitter, f: Frame, ctx: Context, code: Code) -> None:
    """Sweep the slice ``[lo, slice_end)`` of the program's row in blocks of ``f.block_red``
    with per-lane accumulators and finish each reduction into the partial that ``partials``
    stores (a mean stays a sum: the combine divides by ``n_cols``)."""
    sch, acc = w.s, w.acc
    stats = replace(f, n_red="slice_len")  # a slice's lanes count blocks of the slice
    for r in sch.plan.reductions:
        acc.acc_init(f, r, code)
    code.add(f"for start in range(0, slice_len, {f.block_red}):")
    code.indent()
    code.add(
        f"cols = lo + start + tl.arange(0, {f.block_red})[None, :]",
        "col_mask = cols < slice_end",
    )
    for r in sch.plan.reductions:
        acc.acc_update(em, stats, ctx, r, code)
    code.dedent()
    for r in sch.plan.reductions:
        em.done[em.key(r, ctx)] = acc.acc_finish(em, stats, ctx, r, code, True)


def write_slice(w: SweepWriter, em: BodyEmitter, f: Frame, ctx: Context, code: Code) -> Nest | None:
    """Write the full-size outputs over the slice ``[lo, slice_end)`` of the program's row, the
    row's statistics known; returns the nesting of the sweep (the launch sizes ``BLOCK_LO``)."""
    sch = w.s
    stores = list(sch.plan.stores)
    nest = sch.nest_for(stores)
    if nest is None:
        code.add(f"for start in range(0, slice_len, {f.block_red}):")
        code.indent()
        code.add(
            f"cols = lo + start + tl.arange(0, {f.block_red})[None, :]",
            "col_mask = cols < slice_end",
        )
        body_ctx, depth = ctx, 1
    else:
        n_lo = " * ".join(em.dim_size(d) for d in nest.lo)
        code.add(
            "# slices hold whole steps of the outer reduced dims (CHUNK is a multiple of",
            "# their inner extent): per-step inputs load once per step",
            f"for red_hi in range(lo // ({n_lo}), slice_end // ({n_lo})):",
        )
        code.indent()
        body_ctx = sch.nested_ctx(f, nest)
        for name in sch.inputs_of(stores):
            if not sch.layout.varies(name) & set(nest.lo):
                lines: list[str] = []
                em.value(name, body_ctx, lines)
                code.extend(lines)
        code.add(f"for start in range(0, {n_lo}, BLOCK_LO):")
        code.indent()
        w.red_block(f, code, "start", "BLOCK_LO", n_lo)
        depth = 2
    for o in stores:
        lines = []
        em.store(o, safe_name(o), body_ctx, lines, contiguous=True)
        code.extend(lines)
    for _ in range(depth):
        code.dedent()
    return nest


def wait_for_count(helpers: set[str], watch: str, need: str) -> list[str]:
    """Lines that wait until the count at ``watch`` reaches ``need``, then acquire it (the
    pause between polls is a helper, added to ``helpers``)."""
    helpers.add("_sleep_then")
    return [
        "# watch the count with plain volatile loads (an atomic per poll would contend with",
        "# the increments), pausing between polls; then acquire it once",
        f"seen = tl.load({watch}, volatile=True)",
        f"while seen < {need}:",
        "    seen = _sleep_then(seen)",
        f"    seen = tl.load({watch}, volatile=True)",
        "# acquire once; the partials' mask uses its result, so the compiler keeps it",
        f'seen = tl.atomic_add({watch}, 0, sem="acquire")',
        "tl.debug_barrier()  # no thread reads the partials before the acquire",
    ]


def combine_partials(
    w: SweepWriter, em: BodyEmitter, ctx: Context, code: Code, *, synced: bool = True
) -> None:
    """Load the row's partials (from L2: ``.cg`` skips a stale L1 line) and merge them into
    the row's statistics. ``synced`` False: the partials were written by an earlier launch
    (``split_stats``), so all ``n_split`` of them are there and plain loads see them.

    Both kernels own one row (BLOCK_M is 1), so every reduction here runs over all axes and
    gives a scalar: a [BLOCK_M, 1] result would carry the layout of the [1, BLOCK_S] slot
    tile, and broadcasting it over a [1, BLOCK_N] block made Triton convert layouts through
    shared memory element by element (2048 shared stores a program, an order of magnitude
    slower on the H200: measurements.csv)."""
    sch, acc = w.s, w.acc
    if synced:
        mask = "s_mask = row_mask & (slots < seen)  # seen: the whole team (n_split) by now"
    else:
        mask = "s_mask = row_mask & (slots < n_split)  # BLOCK_S is a power of two: mask the tail"
    code.add(
        "tl.static_assert(BLOCK_M == 1)  # the statistics below are scalars",
        "slots = tl.arange(0, BLOCK_S)[None, :]  # one partial per slice",
        mask,
        "at = rows * n_split + slots",
    )
    cache = ', cache_modifier=".cg"' if synced else ""

    def load(ws: str, other: str) -> str:
        return f"tl.load({ws}_ptr + at, mask=s_mask, other={other}{cache})"

    for r in sch.plan.reductions:
        s, out = safe_name(r), em.var(r, ctx)
        if r in sch.plan.welford:
            m = sch.plan.welford[r]
            code.add(f"{out} = {safe_name(m)}_m2 / tl.maximum({safe_name(m)}_n, 1.0)")
        elif r in sch.plan.welford.values():
            acc.helpers.add("_welford_combine")
            stats = f"{out}, {s}_m2, {s}_n"
            code.add(
                f"{stats} = tl.reduce(({load(f'ws_{s}', '0.0')}, "
                f"{load(f'ws_{s}_m2', '0.0')}, {load(f'ws_{s}_n', '0.0')}), 1, "
                "_welford_combine)",
                "# then the one row (axis by axis: the interpreter cannot reduce a tuple",
                "# over all axes at once)",
                f"{stats} = tl.reduce(({stats}), 0, _welford_combine)",
            )
        elif r in sch.plan.online.values():
            code.add(
                f"{s}_parts = {load(f'ws_{s}', NEG_INF)}",
                f"{out} = {_extreme_of_all('max', f'{s}_parts', acc.helpers)}",
            )
        elif r in sch.plan.online:
            m, m_row = safe_name(sch.plan.online[r]), em.var(sch.plan.online[r], ctx)
            code.add(
                f"o_safe = tl.where({m_row} == {NEG_INF}, 0.0, {m_row})",
                f"{out} = tl.sum({load(f'ws_{s}', '0.0')} * tl.exp({m}_parts - o_safe))",
            )
        else:
            op = sch.op(r)
            if op in ("sum", "mean"):
                zero = "0" if acc.is_int(sch.src(r)) else "0.0"
                expr = f"tl.sum({load(f'ws_{s}', zero)})"
                expr += " / n_cols" if op == "mean" else ""
            elif op in ("max", "min"):
                fill = NEG_INF if op == "max" else POS_INF
                expr = _extreme_of_all(op, load(f"ws_{s}", fill), acc.helpers)
            elif op == "prod":
                acc.helpers.add("_prod_combine")
                inner = f"tl.reduce({load(f'ws_{s}', '1.0')}, 1, _prod_combine)"
                expr = f"tl.reduce({inner}, 0, _prod_combine)"
            else:
                raise DesignError(f"the relay has no combine for {op}")
            code.add(f"{out} = {expr}")
        em.done[em.key(r, ctx)] = out


def _extreme_of_all(op: str, parts: str, helpers: set[str]) -> str:
    """The NaN-propagating maximum or minimum of a 2-D tile, one axis at a time (as the
    products above: the interpreter's reductions over all axes are not relied on)."""
    inner = extreme(op, parts, 1, helpers, keep_dims=False)
    return extreme(op, inner, 0, helpers, keep_dims=False)


def _assigned(lines: list[str]) -> set[str]:
    return {ln.split("=", 1)[0].strip() for ln in lines if "=" in ln.split("(", 1)[0]}
