"""Split statistics: a few long rows normalised by many programs, in two launches that never
wait for each other.

One program per row leaves most SMs idle when rows are few (16 rows on 132 SMs), and rows
too long for a resident team (``team``) cannot be held in registers. Here each row is cut into
``n_split`` slices of ``CHUNK`` elements and both kernels run ``n_rows * n_split`` programs,
program ``pid`` owning slice ``pid % n_split`` of row ``pid // n_split``:

    kernel 1  sweep the slice in blocks with per-lane accumulators and store its partial
              statistics (Welford's (mean, M2, n), online softmax's (max, sum), a sum, a
              max...) into a ``(n_rows, n_split)`` workspace
    kernel 2  load the row's ``n_split`` partials (one small vector), combine them into the
              row's statistics (``tl.reduce`` with the folds' combines), and write the slice,
              reading it from HBM a second time

The launch boundary orders the two kernels, so there are no atomics, no waiting and no
residency condition: any row count and length is correct, under the interpreter too. The
input is read twice and the output written once, the looped kernel's traffic, but spread over
every SM.
"""

from __future__ import annotations

from kernelwright.design.families.reduction.relay import (
    combine_partials,
    partials,
    slice_statistics,
    write_slice,
)
from kernelwright.design.families.reduction.sweeps import Kernel, SweepWriter
from kernelwright.design.kernel.common import Code, assemble, program_id
from kernelwright.design.kernel.emitter import KernelArgs

SIZES = [("n_rows", "n_rows"), ("n_cols", "n_cols"), ("n_split", "n_split")]

# every program of both kernels: the slice it owns ([lo, slice_end) of its row)
SLICE_OF_PID = (
    f"pid = {program_id(0)}",
    "slot = pid % n_split  # which slice of the row",
    "rows = pid // n_split + tl.arange(0, BLOCK_M)[:, None]  # BLOCK_M is 1: one row",
    "row_mask = rows < n_rows",
    "lo = slot * CHUNK",
    "slice_end = tl.minimum(lo + CHUNK, n_cols)  # the row's last slice may be shorter",
    "slice_len = slice_end - lo",
)


def stats_kernel(w: SweepWriter, args: KernelArgs, kname: str) -> str:
    """Kernel 1: each program's slice reduced to partial statistics in the workspace; the
    schedule was checked for it (``ReductionSchedule.build``)."""
    sch = w.s
    f = sch.frame()
    em = sch.emitter(args)
    head, code = Code(), Code()
    head.indent()
    code.indent()
    head.add(*SLICE_OF_PID)
    ctx = f.context()
    code.add("", "# ---- this slice's partial statistics")
    slice_statistics(w, em, f, ctx, code)
    for ws, value in partials(w):
        args.pointer(ws)
        code.add(f"tl.store({ws}_ptr + rows * n_split + slot, {value}, mask=row_mask)")
    w.helpers.update(em.helpers)
    args.scalars[:0] = [z for z in SIZES if all(z[0] != x for x, _ in args.scalars)]
    return assemble(kname, args, ["BLOCK_M", "BLOCK_N", "CHUNK"], head, em, code)


def write_kernel(w: SweepWriter, args: KernelArgs, kname: str) -> Kernel:
    """Kernel 2: each program combines its row's partials and writes its slice."""
    sch, acc = w.s, w.acc
    f = sch.frame()
    em = sch.emitter(args)
    head, code = Code(), Code()
    head.indent()
    code.indent()
    head.add(*SLICE_OF_PID)
    ctx = f.context()
    code.add("", "# ---- the row's statistics from its slices' partials (kernel 1 wrote them)")
    for ws, _ in partials(w):
        args.pointer(ws)
    combine_partials(w, em, ctx, code, synced=False)
    w.row_level(em, ctx, code, avail=1)
    code.add("# ---- write this slice (its second read, from HBM)")
    nest = write_slice(w, em, f, ctx, code)
    acc.helpers.update(em.helpers)
    args.scalars[:0] = [z for z in SIZES if all(z[0] != x for x, _ in args.scalars)]
    consts = ["BLOCK_M", "BLOCK_N", "BLOCK_S", "CHUNK"] + (["BLOCK_LO"] if nest else [])
    return Kernel(assemble(kname, args, consts, head, em, code), nest)
