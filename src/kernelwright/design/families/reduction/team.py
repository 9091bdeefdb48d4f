"""Team reductions: a row too long for one program's registers is held by a team of programs,
one slice each, which share the row's statistics through L2 and normalise their own slice from
the registers it was loaded into, so every element is read from HBM once and written once.

    phase 1   take a ticket; load slice ``slot`` of row ``team`` (one block, kept in registers);
              reduce it to partial statistics (Welford's (mean, M2, n) from two sweeps of the
              registers, online softmax's (max, sum), a sum, a max...); store them in a
              workspace and increment the row's arrival count (release)
    phase 2   wait until the whole team has arrived (volatile loads watch the count with a
              pause between polls, one acquiring read), combine the partials into the row's
              statistics (scalars: see ``combine_partials``), and write the slice from the
              values still in registers

Every program of a team waits for the others, so the whole team must be resident at once. The
ticket (an atomic increment when a program starts, not its program id) makes teams start in
order: a program of team ``t + 1`` exists only after every program of team ``t`` has started,
so the lowest unfinished team is either fully started (and finishes) or alone on the GPU
(and its missing programs find free slots). That holds while a team is no larger than the
programs the GPU holds at once; the wrapper keeps ``n_split`` at most the SM count (every SM
holds at least one program) and falls back to the looped kernel beyond that, and under the
interpreter (which runs programs one after another) whenever a row needs more than one slice.

Only one thread of a program runs a scalar atomic, so barriers fence each side: every
thread's partial stores complete before the releasing increment, and the acquiring read
completes before any thread loads the partials (as in ``relay``).
"""

from __future__ import annotations

from kernelwright.design.families.reduction.accumulate import NEG_INF, extreme
from kernelwright.design.families.reduction.relay import combine_partials, partials, wait_for_count
from kernelwright.design.families.reduction.sweeps import Kernel, SweepWriter
from kernelwright.design.kernel.common import Code, DesignError, assemble
from kernelwright.design.kernel.emitter import BodyEmitter, Context, KernelArgs, safe_name


def team_kernel(w: SweepWriter, args: KernelArgs, kname: str) -> Kernel:
    """Both phases of the team in one kernel (see the module docstring); the schedule was
    checked for it (``ReductionSchedule.build``)."""
    sch, acc = w.s, w.acc
    f = sch.frame()
    em = sch.emitter(args)
    head, code = Code(), Code()
    head.indent()
    code.indent()
    head.add(
        "# a ticket (past the counts), not the program id: teams start in ticket order",
        "ticket = tl.atomic_add(count_ptr + n_rows * COUNT_STRIDE, 1)",
        "team = ticket // n_split  # the row this program holds a slice of",
        "slot = ticket % n_split",
        "rows = team + tl.arange(0, BLOCK_M)[:, None]",
        "row_mask = rows < n_rows",
    )
    nest = sch.nest_for(list(sch.plan.stores))
    if nest is None:
        ctx = f.context()
        head.add(
            "# the slice: one block, loaded once and kept in registers until it is written",
            "lo = slot * BLOCK_N",
            "cols = lo + tl.arange(0, BLOCK_N)[None, :]",
            "col_mask = cols < n_cols",
            "slice_len = tl.minimum(n_cols - lo, BLOCK_N)",
        )
    else:
        ctx = sch.nested_ctx(f, nest)
        n_lo = " * ".join(em.dim_size(d) for d in nest.lo)
        head.add(
            "# the slice: one block of one step of the outer reduced dims (a group norm's",
            "# channel), loaded once and kept in registers until it is written; values that",
            "# vary only along the outer dims (the channel's weight) are scalars here",
            f"n_lo_blocks = tl.cdiv({n_lo}, BLOCK_N)",
            "red_hi = slot // n_lo_blocks",
            "lo = (slot % n_lo_blocks) * BLOCK_N",
            "cols = lo + tl.arange(0, BLOCK_N)[None, :]",
            f"col_mask = cols < {n_lo}",
            f"slice_len = tl.minimum({n_lo} - lo, BLOCK_N)",
        )
    code.add("", "# ---- phase 1: this slice's partial statistics, from registers")
    for r in sch.plan.reductions:
        slice_partial(w, em, ctx, r, code)
    for ws, value in partials(w):
        args.pointer(ws)
        code.add(f"tl.store({ws}_ptr + rows * n_split + slot, {value}, mask=row_mask)")
    code.add(
        "# release: every thread's partials are visible to whoever sees the new count",
        "tl.debug_barrier()",
        "watch = count_ptr + team * COUNT_STRIDE",
        'tl.atomic_add(watch, 1, sem="release")',
        "",
        "# ---- phase 2: wait for the whole team, combine, write the slice",
        *wait_for_count(acc.helpers, "watch", "n_split"),
    )
    combine_partials(w, em, ctx, code)
    w.row_level(em, ctx, code, avail=1)
    code.add("# ---- write the slice from the registers it was loaded into")
    for o in sch.plan.stores:
        lines: list[str] = []
        em.store(o, safe_name(o), ctx, lines, contiguous=True)
        code.extend(lines)
    acc.helpers.update(em.helpers)
    sizes = [("n_rows", "n_rows"), ("n_cols", "n_cols"), ("n_split", "n_split")]
    args.pointer("count")
    args.scalars[:0] = [s for s in sizes if all(s[0] != x for x, _ in args.scalars)]
    consts = ["BLOCK_M", "BLOCK_N", "BLOCK_S", "COUNT_STRIDE"]
    return Kernel(assemble(kname, args, consts, head, em, code), nest)


def slice_partial(w: SweepWriter, em: BodyEmitter, ctx: Context, r: str, code: Code) -> None:
    """Reduce the slice in registers to the partial ``combine_partials`` merges: the names
    are those of ``relay.partials``. Two sweeps of the registers where a fold would need one
    sweep of memory (a slice's mean, then its M2 about that mean: no per-element division)."""
    sch, acc = w.s, w.acc
    s = safe_name(r)
    if r in sch.plan.welford:
        return  # the variance travels as its mean's M2
    if r in sch.plan.welford.values():
        var = next(v for v, m in sch.plan.welford.items() if m == r)
        e_name = sch.src(r)
        e = acc.value(em, e_name, ctx, code)
        mask = em.mask_for(e_name, ctx) or "True"
        code.add(
            f"{s}_n = tl.zeros([BLOCK_M, 1], tl.float32) + slice_len",
            f"{s} = tl.sum(tl.where({mask}, {e}, 0.0), axis=1, keep_dims=True) / {s}_n",
            f"w_delta = tl.where({mask}, {e} - {s}, 0.0)",
            f"{safe_name(var)}_m2 = tl.sum(w_delta * w_delta, axis=1, keep_dims=True)",
        )
        return
    if r in sch.plan.online.values():
        e_name = sch.src(r)
        e = acc.value(em, e_name, ctx, code)
        mask = em.mask_for(e_name, ctx) or "True"
        code.add(f"{s} = {extreme('max', f'tl.where({mask}, {e}, {NEG_INF})', 1, acc.helpers)}")
        return
    if r in sch.plan.online:
        m = sch.plan.online[r]
        e_name = sch.src(m)
        e = acc.value(em, e_name, ctx, code)
        mask = em.mask_for(e_name, ctx) or "True"
        code.add(
            f"o_safe = tl.where({safe_name(m)} == {NEG_INF}, 0.0, {safe_name(m)})",
            f"{s} = tl.sum(tl.where({mask}, tl.exp({e} - o_safe), 0.0), axis=1, keep_dims=True)",
        )
        return
    op, src = sch.op(r), sch.src(r)
    if acc.is_int(src):
        raise DesignError("the team's workspace holds fp32 partials, not integer sums")
    if op not in ("sum", "mean", "max", "min", "prod"):
        raise DesignError(f"a team combines statistics, not {op}")
    v = acc.value(em, src, ctx, code)
    mask = em.mask_for(src, ctx) or "True"
    # a mean's partial is its sum: the combine divides by n_cols
    code.add(f"{s} = {acc.block_reduce(op, v, mask, 1)}")
