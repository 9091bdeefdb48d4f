"""Split reductions: partial results per slice of the reduced extent, then a combine kernel.

Stage 1 is the looped kernel restricted to ``[lo, hi)`` of the reduced extent, writing each
reduction's partial (and, for argmax/argmin, the partial's value) into a ``(n_split, n_par)``
workspace. Stage 2 reduces the workspace along its first axis, then runs the group's per-position
epilogue (a mean's division, a loss's final scaling) and writes the outputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernelwright.design.aten import classify
from kernelwright.design.families.reduction.accumulate import (
    BIG_INDEX,
    NEG_INF,
    POS_INF,
    FrameLike,
    extreme,
    holds_extreme,
)
from kernelwright.design.kernel.common import Code, assemble, program_id
from kernelwright.design.kernel.emitter import (
    BodyEmitter,
    Context,
    IndexGroup,
    KernelArgs,
    safe_name,
)

if TYPE_CHECKING:
    from kernelwright.design.families.reduction.sweeps import SweepWriter


def store_partial(
    w: SweepWriter, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code
) -> None:
    """Store reduction ``r``'s partial result of this slice into its workspace."""
    out = em.var(r, ctx)
    par_index = _partial_index(f)
    mask = "row_mask" if f.red_axis == 1 else "col_mask"
    if f.red_axis == 1 and f.par is None:
        mask = "row_mask"
    code.add(
        f"tl.store(ws_{safe_name(r)}_ptr + pid_split * n_par + {par_index}, {out}, mask={mask})"
    )
    if w.s.op(r) in ("argmax", "argmin"):
        code.add(
            f"tl.store(ws_{safe_name(r)}_val_ptr + pid_split * n_par + {par_index}, "
            f"{out}_val, mask={mask})"
        )


def _partial_index(f: FrameLike) -> str:
    if f.red_axis == 1:
        return "rows"
    return "pid_outer * n_inner + cols" if f.outer is not None else "cols"


def combine_kernel(w: SweepWriter, args: KernelArgs, kname: str) -> str:
    """Reduce the SPLIT partials of each output position, then run the epilogue."""
    sch, acc = w.s, w.acc
    em = sch.emitter(args)
    par = IndexGroup(sch.par, "rows", "row_mask", 1, hoist=True)
    head, code = Code(), Code()
    head.indent()
    code.indent()
    head.add(
        f"pid = {program_id(0)}",
        "rows = pid * BLOCK_P + tl.arange(0, BLOCK_P)[None, :]  # [1, BLOCK_P] positions",
        "row_mask = rows < n_par",
        "splits = tl.arange(0, BLOCK_S)[:, None]  # [BLOCK_S, 1]: one partial per slice",
        "mask = (splits < n_split) & row_mask",
    )
    ctx = Context((par,))
    args.scalar("n_par", "n_par")
    args.scalar("n_split", "n_split")
    for r in sch.plan.reductions:
        args.pointer(f"ws_{safe_name(r)}")
        if sch.op(r) in ("argmax", "argmin"):
            args.pointer(f"ws_{safe_name(r)}_val")
    for r in sch.plan.reductions:
        op, out = sch.op(r), em.var(r, ctx)
        ws = f"ws_{safe_name(r)}_ptr"
        loc = "splits * n_par + rows"
        if op in ("sum", "mean"):
            zero = "0" if acc.is_int(sch.src(r)) else "0.0"
            code.add(
                f"{out} = tl.sum(tl.load({ws} + {loc}, mask=mask, other={zero}), axis=0, "
                "keep_dims=True)"
            )
            if op == "mean":
                code.add(f"{out} = {out} / n_red")
                args.scalar("n_red", "n_red_total")
        elif op in ("max", "min"):
            fill = NEG_INF if op == "max" else POS_INF
            parts = f"tl.load({ws} + {loc}, mask=mask, other={fill})"
            code.add(f"{out} = {extreme(op, parts, 0, acc.helpers)}")
        elif op == "prod":
            acc.helpers.add("_prod_combine")
            code.add(
                f"{out} = tl.reduce(tl.load({ws} + {loc}, mask=mask, other=1.0), 0, "
                "_prod_combine, keep_dims=True)"
            )
        else:
            best, fill = ("max", NEG_INF) if op == "argmax" else ("min", POS_INF)
            code.add(
                f"{out}_vals = tl.load(ws_{safe_name(r)}_val_ptr + {loc}, mask=mask, other={fill})",
                f"{out}_idxs = tl.load({ws} + {loc}, mask=mask, other={BIG_INDEX})",
                f"{out}_best = {extreme(best, f'{out}_vals', 0, acc.helpers)}",
                f"{out} = tl.min(tl.where({holds_extreme(f'{out}_vals', f'{out}_best')}, "
                f"{out}_idxs, {BIG_INDEX}), axis=0, keep_dims=True).to(tl.int64)",
            )
        em.done[em.key(r, ctx)] = out
    for name in sch.group.nodes:
        if classify(sch.graph.node(name)) == "reduction" or name in sch.plan.need:
            continue
        acc.value(em, name, ctx, code)
    code.add("# ---- write the results")
    for name in sch.group.outputs:
        lines: list[str] = []
        em.store(name, safe_name(name), ctx, lines, contiguous=True)
        code.extend(lines)
    acc.helpers.update(em.helpers)
    return assemble(kname, args, ["BLOCK_S", "BLOCK_P"], head, em, code)
