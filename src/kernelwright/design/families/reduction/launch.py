"""The wrapper of a reduction group: sizes from the runtime tensors, outputs, and the launch.

onepass   the whole reduced extent in one block when it fits (``ONEPASS_MAX``), several short
          rows per program; otherwise the looped kernel
looped    blocks of ``LOOP_BLOCK`` along the reduced extent
split     about ``SPLIT_PROGRAMS`` programs share the reduced extent; a combine kernel follows
relay     each row in slices of about ``SLICE`` elements, one program each (see ``relay``)
team      each row in slices of ``TEAM_SLICE`` elements held in registers, one program each,
          when the team fits on the GPU at once; otherwise the looped kernel (see ``team``)
split-stats
          each row in slices of about ``SLICE`` elements, one program each in two launches:
          partial statistics, then the combine and the write (see ``split_stats``)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelwright.design.families.reduction.accumulate import Accumulators
from kernelwright.design.families.reduction.relay import COUNT_STRIDE, partials, relay_kernel
from kernelwright.design.families.reduction.schedule import Nest, ReductionSchedule
from kernelwright.design.families.reduction.split import combine_kernel
from kernelwright.design.families.reduction.split_stats import stats_kernel, write_kernel
from kernelwright.design.families.reduction.sweeps import SweepWriter
from kernelwright.design.families.reduction.team import team_kernel
from kernelwright.design.fusion import Group
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import (
    Code,
    RenderedKernel,
    allocate,
    dim_sources,
    launch,
    wrapper_params,
)
from kernelwright.design.kernel.emitter import KernelArgs, safe_name

ROW_DEFAULTS = {
    "ONEPASS_MAX": 16384,
    "TILE": 4096,
    "ROWS": 16,
    "WARPS": 4,
    "LOOP_BLOCK": 2048,
    "LOOP_ROWS": 1,
    "LOOP_WARPS": 8,
    "SPLIT_PROGRAMS": 1024,
    "SLICE": 65536,
    "LAG": 4,
    "TEAM_SLICE": 8192,
    "TEAM_WARPS": 4,
}
# the split statistics' slices a row, at most: each program of its write kernel loads every
# partial of its row, so the partials' traffic grows as the square of the slices
MAX_SPLIT = 1024
COLUMN_DEFAULTS = {
    "ONEPASS_MAX": 1024,
    "TILE": 4096,
    "COLS": 128,
    "WARPS": 4,
    "LOOP_BLOCK": 8,
    "LOOP_COLS": 512,
    "LOOP_WARPS": 4,
    "SPLIT_PROGRAMS": 1024,
}


def render_reduction(
    graph: OpGraph,
    group: Group,
    name: str,
    variant: str,
    params: Mapping[str, Any],
    *,
    online: bool = True,
    welford: bool = True,
) -> RenderedKernel:
    """Render a reduction group: ``variant`` is ``onepass`` (with a looped fallback for longer
    rows), ``looped`` or ``split``."""
    schedule = ReductionSchedule.build(graph, group, variant, online=online, welford=welford)
    w = SweepWriter(schedule, Accumulators(graph, schedule.layout, schedule.plan))
    defaults = ROW_DEFAULTS if schedule.along == "row" else COLUMN_DEFAULTS
    p = {**defaults, **{k: v for k, v in params.items() if k in defaults}}
    layout = schedule.layout
    kernels: list[str] = []
    code = Code()
    wparams = wrapper_params(graph, group)
    code.add(f"def {name}({', '.join(wparams)}):")
    code.indent()
    code.add(f'"""{_describe(w, variant)}"""')
    code.add("# sizes come from the runtime tensors, so any input shape works")
    sources = dim_sources(graph, group, layout)
    for d in sorted(sources):
        code.add(f"dim{d} = {sources[d]}")
    prod = lambda dims: " * ".join(f"dim{d}" for d in dims) or "1"  # noqa: E731
    if w.s.along == "row":
        code.add(f"n_rows = {prod(w.s.par)}", f"n_cols = {prod(w.s.red)}")
    else:
        code.add(
            f"n_outer = {prod(w.s.outer)}",
            f"n_inner = {prod(w.s.inner)}",
            f"n_red = {prod(w.s.red)}",
        )
    first = safe_name(group.inputs[0])
    allocate(graph, group, layout, code, first)
    looped_args = KernelArgs(index_64=True)
    looped_name = f"{name}_looped_kernel"
    if variant == "split":
        _split_launch(w, p, name, code, kernels)
    elif variant == "relay":
        _relay_launch(w, p, name, code, kernels)
    elif variant == "team":
        _team_launch(w, p, name, code, kernels)
    elif variant == "split-stats":
        _split_stats_launch(w, p, name, code, kernels)
    else:
        looped = w.looped_kernel(looped_args, looped_name)
        if variant == "onepass":
            one_args = KernelArgs(index_64=True)
            kernels.append(w.onepass_kernel(one_args, f"{name}_kernel"))
            _onepass_launch(w, p, f"{name}_kernel", one_args, code)
            code.add("else:")
            code.indent()
            code.add("# the reduced extent does not fit in registers: sweep it in blocks")
            _looped_launch(w, p, looped_name, looped_args, code, looped.nest)
            code.dedent()
        else:
            _looped_launch(w, p, looped_name, looped_args, code, looped.nest)
        kernels.append(looped.text)
    outs = ", ".join(safe_name(o) for o in group.outputs)
    code.add(f"return {outs}" + ("," if len(group.outputs) == 1 else ""))
    helpers = tuple(sorted(w.helpers))
    return RenderedKernel(
        tuple(kernels), code.text(), name, tuple(wparams), tuple(group.outputs), helpers
    )


def _describe(w: SweepWriter, variant: str) -> str:
    nodes = [w.s.graph.node(n) for n in w.s.group.nodes]
    ops = ", ".join(dict.fromkeys(n.op for n in nodes if n.kind == "call"))
    how = {
        "onepass": "one pass in registers",
        "looped": "blocked sweeps",
        "split": "split across programs",
        "relay": "a team of programs per row, each writing an earlier team's row",
        "team": "a team of programs holds each row in registers and shares its statistics",
        "split-stats": "each row's statistics split across programs, combined by a second "
        "kernel that writes the row",
    }
    return f"Fused {w.s.along} reduction ({ops}): {how[variant]}."


def _onepass_launch(
    w: SweepWriter, p: Mapping[str, Any], kname: str, args: KernelArgs, code: Code
) -> None:
    if w.s.along == "row":
        code.add(
            "BLOCK_N = _pow2(n_cols)  # the whole row in one block",
            f"if BLOCK_N <= {p['ONEPASS_MAX']}:",
        )
        code.indent()
        code.add(
            "# several short rows per program keep every thread busy",
            f"BLOCK_M = min({p['ROWS']}, max(1, {p['TILE']} // BLOCK_N), "
            "_pow2(n_rows))",
            "grid = (_cdiv(n_rows, BLOCK_M),)",
        )
        launch(
            kname,
            "grid",
            args,
            {"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "num_warps": p["WARPS"]},
            code,
        )
    else:
        code.add(
            "BLOCK_R = _pow2(n_red)  # the whole reduced extent in one block",
            f"if BLOCK_R <= {p['ONEPASS_MAX']}:",
        )
        code.indent()
        code.add(
            "# as many contiguous positions per program as the tile allows",
            f"BLOCK_P = min({p['COLS']}, max(1, {p['TILE']} // BLOCK_R), "
            "_pow2(n_inner))",
            "grid = (_cdiv(n_inner, BLOCK_P) * n_outer,)",
        )
        launch(
            kname,
            "grid",
            args,
            {"BLOCK_P": "BLOCK_P", "BLOCK_R": "BLOCK_R", "num_warps": p["WARPS"]},
            code,
        )
    code.dedent()


def _looped_launch(
    w: SweepWriter,
    p: Mapping[str, Any],
    kname: str,
    args: KernelArgs,
    code: Code,
    nest: Nest | None,
) -> None:
    if w.s.along == "row":
        code.add(
            f"BLOCK_N = min({p['LOOP_BLOCK']}, _pow2(n_cols))",
            f"BLOCK_M = min({p['LOOP_ROWS']}, _pow2(n_rows))",
            "grid = (_cdiv(n_rows, BLOCK_M),)",
        )
        consts: dict[str, Any] = {"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N"}
    else:
        code.add(*_column_tile(p), "grid = (_cdiv(n_inner, BLOCK_P) * n_outer,)")
        consts = {"BLOCK_P": "BLOCK_P", "BLOCK_R": "BLOCK_R"}
    if nest is not None:
        block = "BLOCK_N" if w.s.along == "row" else "BLOCK_R"
        inner = " * ".join(f"dim{d}" for d in nest.lo)
        code.add(
            "# the nested write sweep's blocks span only the inner reduced dims",
            f"BLOCK_LO = min({block}, _pow2({inner}))",
        )
        consts["BLOCK_LO"] = "BLOCK_LO"
    launch(kname, "grid", args, {**consts, "num_warps": p["LOOP_WARPS"]}, code)


# Elements of one column tile (reduced rows x positions): per-lane accumulators and the loaded
# tile live in registers, so a bigger tile fails to compile (out of resources). 64 x 512, the
# split's default column tile, fits.
COLUMN_TILE_MAX = 32768


def _column_tile(p: Mapping[str, Any]) -> tuple[str, str]:
    """BLOCK_P positions, then BLOCK_R reduced rows clipped so the tile fits in registers: a
    tuned LOOP_BLOCK meant for rows (up to 4096) must not make a column kernel fail."""
    return (
        f"BLOCK_P = min({p['LOOP_COLS']}, _pow2(n_inner))",
        f"BLOCK_R = min({p['LOOP_BLOCK']}, _pow2(n_red), "
        f"max(1, {COLUMN_TILE_MAX} // BLOCK_P))",
    )


def _split_launch(
    w: SweepWriter, p: Mapping[str, Any], name: str, code: Code, kernels: list[str]
) -> None:
    stage1, stage2 = KernelArgs(index_64=True), KernelArgs(index_64=True)
    k1, k2 = f"{name}_partial_kernel", f"{name}_combine_kernel"
    kernels.append(w.looped_kernel(stage1, k1, split=True).text)
    kernels.append(combine_kernel(w, stage2, k2))
    if w.s.along == "row":
        code.add(
            f"BLOCK_N = min({p['LOOP_BLOCK']}, _pow2(n_cols))",
            f"BLOCK_M = min({p['LOOP_ROWS']}, _pow2(n_rows))",
            "n_par = n_rows",
            "par_programs = _cdiv(n_rows, BLOCK_M)",
            "block_red, n_red_total = BLOCK_N, n_cols",
        )
        consts = {"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "num_warps": p["LOOP_WARPS"]}
        grid1 = "(par_programs, n_split)"
    else:
        code.add(
            *_column_tile(p),
            "n_par = n_outer * n_inner",
            "par_programs = _cdiv(n_inner, BLOCK_P) * n_outer",
            "block_red, n_red_total = BLOCK_R, n_red",
        )
        consts = {"BLOCK_P": "BLOCK_P", "BLOCK_R": "BLOCK_R", "num_warps": p["LOOP_WARPS"]}
        grid1 = "(par_programs, n_split)"
    code.add(
        "# split the reduced extent so that about SPLIT_PROGRAMS programs share the work",
        f"n_split = max(1, min({p['SPLIT_PROGRAMS']} // par_programs, "
        "_cdiv(n_red_total, block_red), 1024))",
        "chunk = _cdiv(_cdiv(n_red_total, n_split), block_red) * block_red",
        "n_split = _cdiv(n_red_total, chunk)",
    )
    for r in w.s.plan.reductions:
        op = w.s.op(r)
        if op in ("argmax", "argmin"):
            dtype = "torch.int32"
        elif op in ("sum", "mean") and w.acc.is_int(w.s.src(r)):
            dtype = "torch.int64"
        else:
            dtype = "torch.float32"
        first = safe_name(w.s.group.inputs[0])
        code.add(
            f"ws_{safe_name(r)} = torch.empty((n_split, n_par), device={first}.device, "
            f"dtype={dtype})"
        )
        if op in ("argmax", "argmin"):
            code.add(
                f"ws_{safe_name(r)}_val = torch.empty((n_split, n_par), device={first}.device, "
                "dtype=torch.float32)"
            )
    launch(k1, grid1, stage1, consts, code)
    code.add(
        "BLOCK_S = _pow2(n_split)",
        "BLOCK_P2 = max(1, min(_pow2(n_par), 4096 // BLOCK_S))",
        "grid = (_cdiv(n_par, BLOCK_P2),)",
    )
    launch(k2, "grid", stage2, {"BLOCK_S": "BLOCK_S", "BLOCK_P": "BLOCK_P2", "num_warps": 4}, code)


def _counts_and_partials(w: SweepWriter, first: str, teams: str, code: Code) -> None:
    """The relay's and the team's workspace: an arrival count per team (``teams`` of them),
    the ticket counter after them, and each partial per row and slice."""
    code.add(
        "# arrival counts per row, then the ticket counter, one per 128-byte line; zeroed on",
        "# every call",
        f"count = torch.zeros(({teams} + 1) * {COUNT_STRIDE}, device={first}.device, "
        "dtype=torch.int32)",
    )
    for ws, _ in partials(w):
        code.add(
            f"{ws} = torch.empty(max(1, n_rows) * n_split, device={first}.device, "
            "dtype=torch.float32)"
        )


def _relay_launch(
    w: SweepWriter, p: Mapping[str, Any], name: str, code: Code, kernels: list[str]
) -> None:
    args = KernelArgs(index_64=True)
    kname = f"{name}_relay_kernel"
    relay = relay_kernel(w, args, kname)
    kernels.append(relay.text)
    first = safe_name(w.s.group.inputs[0])
    code.add(f"BLOCK_N = min({p['LOOP_BLOCK']}, _pow2(n_cols))")
    consts: dict[str, Any] = {"BLOCK_M": 1, "BLOCK_N": "BLOCK_N"}
    if relay.nest is not None:
        inner = " * ".join(f"dim{d}" for d in relay.nest.lo)
        code.add(
            f"n_lo = {inner}  # a slice holds whole steps of the outer reduced dims",
            "BLOCK_LO = min(BLOCK_N, _pow2(n_lo))",
            f"chunk = max(1, {p['SLICE']} // n_lo) * n_lo",
        )
        consts["BLOCK_LO"] = "BLOCK_LO"
    else:
        code.add(
            f"chunk = _cdiv(min({p['SLICE']}, n_cols), BLOCK_N) * BLOCK_N"
            "  # whole blocks per slice"
        )
    code.add("n_split = _cdiv(n_cols, chunk)  # programs per row (a team)")
    _counts_and_partials(w, first, f"n_rows + {p['LAG']}", code)
    code.add(
        f"grid = (n_split * (n_rows + {p['LAG']}),)  # LAG more teams: they write the last rows"
    )
    consts.update(
        {
            "BLOCK_S": "_pow2(n_split)",
            "CHUNK": "chunk",
            "LAG": p["LAG"],
            "COUNT_STRIDE": COUNT_STRIDE,
            "num_warps": p["LOOP_WARPS"],
        }
    )
    launch(kname, "grid", args, consts, code)


def _split_stats_launch(
    w: SweepWriter, p: Mapping[str, Any], name: str, code: Code, kernels: list[str]
) -> None:
    k1, k2 = f"{name}_stats_kernel", f"{name}_write_kernel"
    args1, args2 = KernelArgs(index_64=True), KernelArgs(index_64=True)
    kernels.append(stats_kernel(w, args1, k1))
    write = write_kernel(w, args2, k2)
    kernels.append(write.text)
    first = safe_name(w.s.group.inputs[0])
    code.add(f"BLOCK_N = min({p['LOOP_BLOCK']}, _pow2(n_cols))")
    consts: dict[str, Any] = {"BLOCK_M": 1, "BLOCK_N": "BLOCK_N", "CHUNK": "chunk"}
    if write.nest is not None:
        inner = " * ".join(f"dim{d}" for d in write.nest.lo)
        code.add(
            f"n_lo = {inner}  # a slice holds whole steps of the outer reduced dims",
            "BLOCK_LO = min(BLOCK_N, _pow2(n_lo))",
            f"chunk = max(1, {p['SLICE']} // n_lo, "
            f"_cdiv(_cdiv(n_cols, {MAX_SPLIT}), n_lo)) * n_lo",
        )
    else:
        code.add(
            "# whole blocks per slice",
            f"chunk = _cdiv(min({p['SLICE']}, n_cols), BLOCK_N) * BLOCK_N",
            f"chunk = max(chunk, _cdiv(_cdiv(n_cols, {MAX_SPLIT}), BLOCK_N) * BLOCK_N)",
        )
    code.add(
        f"n_split = _cdiv(n_cols, chunk)  # slices a row (at most {MAX_SPLIT}: each "
        "write program loads all of its row's partials)",
    )
    for ws, _ in partials(w):
        code.add(
            f"{ws} = torch.empty(max(1, n_rows) * n_split, device={first}.device, "
            "dtype=torch.float32)"
        )
    code.add("grid = (n_rows * n_split,)  # one program a slice, in both kernels")
    launch(k1, "grid", args1, {**consts, "num_warps": p["LOOP_WARPS"]}, code)
    consts["BLOCK_S"] = "_pow2(n_split)"
    if write.nest is not None:
        consts["BLOCK_LO"] = "BLOCK_LO"
    launch(k2, "grid", args2, {**consts, "num_warps": p["LOOP_WARPS"]}, code)


def _team_launch(
    w: SweepWriter, p: Mapping[str, Any], name: str, code: Code, kernels: list[str]
) -> None:
    args = KernelArgs(index_64=True)
    kname = f"{name}_team_kernel"
    team = team_kernel(w, args, kname)
    kernels.append(team.text)
    first = safe_name(w.s.group.inputs[0])
    if team.nest is None:
        code.add(
            f"BLOCK_N = min({p['TEAM_SLICE']}, _pow2(n_cols))  # one slice",
            "n_split = _cdiv(n_cols, BLOCK_N)  # programs per row (a team)",
        )
    else:
        inner = " * ".join(f"dim{d}" for d in team.nest.lo)
        code.add(
            f"n_lo = {inner}  # a slice lies in one step of the outer reduced dims",
            f"BLOCK_N = min({p['TEAM_SLICE']}, _pow2(n_lo))",
            "n_split = n_cols // n_lo * _cdiv(n_lo, BLOCK_N)  # programs per row (a team)",
        )
    code.add(
        "# a team waits for all of its programs, so all must be resident at once: at most one",
        "# per SM (every SM holds one)",
        f'if {first}.device.type == "cuda":',
        f"    resident = _cuda_device({first}.device)[0]  # SMs, queried once a process",
        f'elif {first}.device.type == "cpu":',
        "    resident = 1  # Triton's interpreter runs programs one after another",
        "else:",
        "    resident = n_split  # meta tensors (ahead-of-time compile checks): nothing runs",
        "if n_split <= resident:",
    )
    code.indent()
    _counts_and_partials(w, first, "n_rows", code)
    consts: dict[str, Any] = {
        "BLOCK_M": 1,
        "BLOCK_N": "BLOCK_N",
        "BLOCK_S": "_pow2(n_split)",
        "COUNT_STRIDE": COUNT_STRIDE,
        "num_warps": p["TEAM_WARPS"],
    }
    launch(kname, "(n_split * n_rows,)", args, consts, code)
    code.dedent()
    code.add("else:")
    code.indent()
    code.add("# a team larger than the GPU holds at once: sweep each row in blocks")
    looped_args = KernelArgs(index_64=True)
    looped_name = f"{name}_looped_kernel"
    looped = w.looped_kernel(looped_args, looped_name)
    kernels.append(looped.text)
    _looped_launch(w, p, looped_name, looped_args, code, looped.nest)
    code.dedent()
