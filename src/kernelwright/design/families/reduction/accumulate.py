"""Accumulators of reduction kernels: how each reduction is initialised, updated per block and
finished, in one pass (the whole extent in registers) or looped (per-lane accumulators).

    sum / mean      acc += where(mask, v, 0)           tl.sum(acc) (/ n)
    max / min       acc = maximum(acc, where(mask, v, -inf))   NaN-propagating, as in PyTorch
    prod            acc *= where(mask, v, 1)           tl.reduce(acc, _prod_combine)
    argmax / argmin per lane: first extreme value and its index; then the smallest index among
                    the lanes holding the row's extreme (torch's first-index tie rule). NaN
                    counts as the extreme, as in PyTorch: the first NaN's index wins
    online softmax  per lane: running maximum and the sum of exp(x - max) rescaled when it grows;
                    lanes merged once after the sweep
    Welford         per lane: running mean and M2 of x minus the lane's first element (every
                    lane of a block has seen the same count, so the update multiplies by one
                    scalar reciprocal); lanes merged once after the sweep with Chan's formula
                    (``tl.reduce`` with ``_welford_combine``) about the row's first element

Masked lanes hold the reduction's neutral element, so padding never changes a result. Looped
accumulators are per lane, so a sweep issues no cross-warp reduction until it ends: the loads of
one block do not wait for a reduction of the previous one.
"""

from __future__ import annotations

from typing import Protocol

from kernelwright.design.aten import REDUCTIONS
from kernelwright.design.axes import Layout
from kernelwright.design.families.reduction.passes import PassPlan
from kernelwright.design.graph import OpGraph, Ref
from kernelwright.design.kernel.common import Code, DesignError
from kernelwright.design.kernel.emitter import BodyEmitter, Context, IndexGroup, safe_name

NEG_INF = '-float("inf")'
POS_INF = 'float("inf")'
BIG_INDEX = "2147483647"


def extreme(op: str, x: str, axis: int, helpers: set[str], keep_dims: bool = True) -> str:
    """``x``'s maximum (``op`` "max") or minimum along ``axis``. NaN wins, as in PyTorch
    (``tl.max`` would return the other operand); the combine function it calls joins
    ``helpers``. The same instruction on sm_80 and later (``max.NaN.f32``)."""
    combine = "_max_combine" if op == "max" else "_min_combine"
    helpers.add(combine)
    return f"tl.reduce({x}, {axis}, {combine}" + (", keep_dims=True)" if keep_dims else ")")


def holds_extreme(v: str, best: str) -> str:
    """Where ``v`` holds the extreme ``best`` that :func:`extreme` found: equal, or both NaN."""
    return f"(({v} == {best}) | (({v} != {v}) & ({best} != {best})))"


def beats(v: str, acc: str, op: str) -> str:
    """Whether ``v`` replaces a lane's extreme ``acc``: strictly beyond it, or the first NaN (no
    value replaces a NaN, so each lane keeps its first extreme)."""
    cmp = ">" if op == "argmax" else "<"
    return f"(({v} {cmp} {acc}) | (({v} != {v}) & ({acc} == {acc})))"


class FrameLike(Protocol):
    """What the accumulators need to know about a kernel's tile (see ``schedule.Frame``)."""

    @property
    def red_axis(self) -> int: ...

    @property
    def red(self) -> IndexGroup: ...

    @property
    def par(self) -> IndexGroup: ...

    @property
    def outer(self) -> IndexGroup | None: ...

    @property
    def n_red(self) -> str: ...

    @property
    def block_red(self) -> str: ...

    @property
    def red_index(self) -> str: ...

    def reduced_shape(self) -> str: ...

    def acc_shape(self) -> str: ...


class Accumulators:
    """How each reduction of a group is reduced (see the module docstring); collects the
    ``@triton.jit`` helpers its code calls in :attr:`helpers`.

    Args:
        graph: the lowered graph.
        layout: the group's layout.
        plan: the group's sweeps (which folds apply); an empty plan for one-pass use only.
    """

    def __init__(self, graph: OpGraph, layout: Layout, plan: PassPlan) -> None:
        self.graph, self.layout, self.plan = graph, layout, plan
        self.helpers: set[str] = set()

    def op(self, r: str) -> str:
        return REDUCTIONS[self.graph.node(r).target]

    def is_int(self, name: str) -> bool:
        return not self.graph.meta(name).is_float

    def src(self, r: str) -> str:
        a = self.graph.node(r).args[0]
        assert isinstance(a, Ref)
        return a.name

    def value(self, em: BodyEmitter, name: str, ctx: Context, code: Code) -> str:
        """``name``'s expression in ``ctx``; its statements go to ``code``."""
        lines: list[str] = []
        expr = em.value(name, ctx, lines)
        code.extend(lines)
        return expr

    def reduce_onepass(
        self, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code
    ) -> str:
        op, src = self.op(r), self.src(r)
        v = self.value(em, src, ctx, code)
        mask = em.mask_for(src, ctx) or "True"
        out = em.var(r, ctx)
        ax = f.red_axis
        full = self.layout.is_full(src)
        if not full:  # the input is constant along the reduced axis
            code.add(f"{out} = {self._constant_reduce(op, v, f)}")
            return out
        if op in ("sum", "mean", "max", "min", "prod"):
            expr = self.block_reduce(op, v, mask, ax, self.is_int(src))
            code.add(f"{out} = {expr}" + (f" / {f.n_red}" if op == "mean" else ""))
        elif op in ("argmax", "argmin"):
            best, fill = ("max", NEG_INF) if op == "argmax" else ("min", POS_INF)
            found = extreme(best, f"tl.where({mask}, {v}, {fill})", ax, self.helpers)
            code.add(f"{out}_best = {found}")
            code.add(
                "# first index holding the extreme value (torch's tie rule)",
                f"{out} = tl.min(tl.where({holds_extreme(v, f'{out}_best')} & {mask}, "
                f"{f.red_index}, {BIG_INDEX}), axis={ax}, keep_dims=True).to(tl.int64)",
            )
        else:
            raise DesignError(f"no one-pass form for {op}")
        return out

    def block_reduce(self, op: str, v: str, mask: str, ax: int, is_int: bool = False) -> str:
        """The expression reducing ``v`` along ``ax`` with masked lanes neutral (a mean: its
        sum; the caller divides)."""
        if op in ("sum", "mean"):
            zero, cast = ("0", ".to(tl.int64)") if is_int else ("0.0", "")
            return f"tl.sum(tl.where({mask}, {v}{cast}, {zero}), axis={ax}, keep_dims=True)"
        if op in ("max", "min"):
            fill = NEG_INF if op == "max" else POS_INF
            return extreme(op, f"tl.where({mask}, {v}, {fill})", ax, self.helpers)
        if op == "prod":
            self.helpers.add("_prod_combine")
            return f"tl.reduce(tl.where({mask}, {v}, 1.0), {ax}, _prod_combine, keep_dims=True)"
        raise DesignError(f"no block reduction for {op}")

    def _constant_reduce(self, op: str, v: str, f: FrameLike) -> str:
        if op == "sum":
            return f"{v} * {f.n_red}"
        if op in ("mean", "max", "min"):
            return v
        if op in ("argmax", "argmin"):
            return f"tl.zeros({f.reduced_shape()}, tl.int64)"
        raise DesignError(f"reduction {op} of a constant")

    def acc_init(self, f: FrameLike, r: str, code: Code) -> None:
        op, src = self.op(r), self.src(r)
        shape = f.acc_shape()
        if r in self.plan.online:
            m = self.plan.online[r]
            code.add(
                "# online softmax per lane: a running maximum and the sum of exp(x - that maximum)",
                f"{safe_name(m)}_lane = tl.full({shape}, {NEG_INF}, tl.float32)",
                f"{safe_name(r)}_lane = tl.zeros({shape}, tl.float32)",
            )
            return
        if r in self.plan.online.values():
            return
        if r in self.plan.welford:
            m = self.plan.welford[r]
            code.add(
                "# Welford per lane: the running mean and M2 of the elements each lane has seen,",
                "# about the lane's first element (its pivot)",
                f"{safe_name(m)}_lane = tl.zeros({shape}, tl.float32)",
                f"{safe_name(r)}_lane = tl.zeros({shape}, tl.float32)",
                f"{safe_name(m)}_pivot = tl.zeros({shape}, tl.float32)",
            )
            return
        if r in self.plan.welford.values():
            return
        acc = f"acc_{safe_name(r)}"
        if op in ("sum", "mean"):
            dtype = "tl.int64" if self.is_int(src) else "tl.float32"
            code.add(f"{acc} = tl.zeros({shape}, {dtype})")
        elif op in ("max", "argmax"):
            code.add(f"{acc} = tl.full({shape}, {NEG_INF}, tl.float32)")
        elif op in ("min", "argmin"):
            code.add(f"{acc} = tl.full({shape}, {POS_INF}, tl.float32)")
        elif op == "prod":
            code.add(f"{acc} = tl.full({shape}, 1.0, tl.float32)")
        if op in ("argmax", "argmin"):
            # the index type of the sweep (64-bit under INDEX_64: a loop-carried value keeps it)
            code.add(f"{acc}_idx = tl.zeros({shape}, tl.int64 if INDEX_64 else tl.int32)")

    def acc_update(self, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code) -> None:
        op, src = self.op(r), self.src(r)
        if r in self.plan.online.values() or r in self.plan.welford.values():
            return
        if r in self.plan.online:
            self.online_update(em, f, ctx, r, code)
            return
        if r in self.plan.welford:
            self.welford_update(em, f, ctx, r, code)
            return
        v = self.value(em, src, ctx, code)
        mask = em.mask_for(src, ctx) or "True"
        acc = f"acc_{safe_name(r)}"
        if op in ("sum", "mean"):
            zero = "0" if self.is_int(src) else "0.0"
            cast = ".to(tl.int64)" if self.is_int(src) else ""
            code.add(f"{acc} = {acc} + tl.where({mask}, {v}{cast}, {zero})")
        elif op in ("max", "min"):
            fill = NEG_INF if op == "max" else POS_INF
            fn = "tl.maximum" if op == "max" else "tl.minimum"
            code.add(
                f"{acc} = {fn}({acc}, tl.where({mask}, {v}, {fill}), "
                "propagate_nan=tl.PropagateNan.ALL)"
            )
        elif op == "prod":
            code.add(f"{acc} = {acc} * tl.where({mask}, {v}, 1.0)")
        elif op in ("argmax", "argmin"):
            code.add(
                f"better = {mask} & {beats(v, acc, op)}  # each lane keeps its first extreme",
                f"{acc}_idx = tl.where(better, {f.red_index}, {acc}_idx)",
                f"{acc} = tl.where(better, {v}, {acc})",
            )

    def online_update(
        self, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code
    ) -> None:
        """One block of an online softmax, per lane: ``m' = max(m, x)`` and
        ``s' = s * exp(m - m') + exp(x - m')``, with one exponential: ``exp(min - max)`` is the
        rescale when x is the new maximum and x's own term otherwise."""
        m = self.plan.online[r]
        e_name = self.src(m)
        e = self.value(em, e_name, ctx, code)
        mask = em.mask_for(e_name, ctx) or "True"
        ml, sl = f"{safe_name(m)}_lane", f"{safe_name(r)}_lane"
        code.add(
            "# online softmax per lane: the maximum so far, and the sum rescaled when it grows",
            f"o_x = tl.where({mask}, {e}, {NEG_INF})",
            "# NaN-propagating: a NaN makes the lane's sum NaN, as PyTorch's softmax is",
            f"o_max = tl.maximum({ml}, o_x, propagate_nan=tl.PropagateNan.ALL)",
            f"o_exp = tl.exp(tl.minimum({ml}, o_x, propagate_nan=tl.PropagateNan.ALL) - o_max)",
            f"o_exp = tl.where(o_max == {NEG_INF}, 0.0, o_exp)  # lanes that saw only -inf add 0",
            f"{sl} = tl.where(o_x > {ml}, {sl} * o_exp + 1.0, {sl} + o_exp)",
            f"{ml} = o_max",
        )

    def welford_update(
        self, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code
    ) -> None:
        """One block of Welford's update, per lane. A lane inside the extent has seen one element
        per block so far (sweeps run forwards and only the last block is masked), so the new
        mean divides by ``start // BLOCK + 1``, one scalar reciprocal per block."""
        m = self.plan.welford[r]
        e_name = self.src(m)
        e = self.value(em, e_name, ctx, code)
        mask = em.mask_for(e_name, ctx) or "True"
        ml, m2 = f"{safe_name(m)}_lane", f"{safe_name(r)}_lane"
        pivot = f"{safe_name(m)}_pivot"
        code.add(
            "# Welford per lane: every lane inside the extent has seen one element per block.",
            "# Statistics of x - pivot (the lane's first element): the running mean stays near",
            "# zero, so its updates do not round at the data's offset (x ~ 1000 +- 3 lost 1e-4)",
            f"{pivot} = tl.where((start == 0) & {mask}, {e}, {pivot})  # masked lanes keep 0",
            f"w_rcp = 1.0 / (start // {f.block_red} + 1)",
            f"w_y = {e} - {pivot}",
            f"w_delta = tl.where({mask}, w_y - {ml}, 0.0)",
            f"{ml} = {ml} + w_delta * w_rcp",
            f"{m2} = {m2} + tl.where({mask}, w_delta * (w_y - {ml}), 0.0)",
        )

    def online_finish(self, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code) -> str:
        """Merge the lanes once: the row maximum, then each lane's sum rescaled to it."""
        ax = f.red_axis
        out = em.var(r, ctx)
        if r in self.plan.online.values():  # the maximum: finished first (group order)
            code.add(f"{out} = {extreme('max', f'{safe_name(r)}_lane', ax, self.helpers)}")
            return out
        m = self.plan.online[r]
        m_row = em.var(m, ctx)
        code.add(
            f"o_safe = tl.where({m_row} == {NEG_INF}, 0.0, {m_row})  # an empty row sums to 0",
            f"{out} = tl.sum({safe_name(r)}_lane * tl.exp({safe_name(m)}_lane - o_safe), "
            f"axis={ax}, keep_dims=True)",
        )
        return out

    def welford_finish(
        self, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code
    ) -> str:
        """Merge the lanes once with Chan's formula (the mean first, then the variance). A lane
        saw one element per block it was inside: the last block's masked tail saw one fewer."""
        ax = f.red_axis
        out = em.var(r, ctx)
        if r in self.plan.welford.values():  # the mean: finished first (group order)
            var = next(v for v, mean in self.plan.welford.items() if mean == r)
            self.helpers.add("_welford_combine")
            lanes = f"tl.arange(0, {f.block_red})" + ("[None, :]" if ax == 1 else "[:, None]")
            pivot = f"{safe_name(r)}_pivot"
            code.add(
                f"w_lane = {lanes}",
                f"w_cnt = tl.where(w_lane < {f.n_red}, ({f.n_red} - 1 - w_lane) // "
                f"{f.block_red} + 1, 0).to(tl.float32)",
                "# the lanes' means merge about one pivot for the whole row (lane 0's, its first",
                "# element: a sum of one nonzero is exact), then the pivot is added back once",
                f"w_base = tl.sum(tl.where(w_lane == 0, {pivot}, 0.0), axis={ax}, keep_dims=True)",
                f"{out}, {safe_name(var)}_m2, {safe_name(r)}_n = tl.reduce(("
                f"{safe_name(r)}_lane + ({pivot} - w_base), {safe_name(var)}_lane, "
                f"tl.broadcast_to(w_cnt, {f.acc_shape()})), {ax}, _welford_combine, "
                "keep_dims=True)",
                f"{out} = w_base + {out}",
            )
            return out
        m = self.plan.welford[r]
        code.add(f"{out} = {safe_name(r)}_m2 / tl.maximum({safe_name(m)}_n, 1.0)")
        return out

    def acc_finish(
        self, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code, split: bool
    ) -> str:
        op = self.op(r)
        ax = f.red_axis
        out = em.var(r, ctx)
        if r in self.plan.online or r in self.plan.online.values():
            return self.online_finish(em, f, ctx, r, code)
        if r in self.plan.welford or r in self.plan.welford.values():
            return self.welford_finish(em, f, ctx, r, code)
        acc = f"acc_{safe_name(r)}"
        if op in ("sum", "mean"):
            expr = f"tl.sum({acc}, axis={ax}, keep_dims=True)"
            if op == "mean" and not split:
                expr = f"{expr} / {f.n_red}"
        elif op in ("max", "min"):
            expr = extreme(op, acc, ax, self.helpers)
        elif op == "prod":
            self.helpers.add("_prod_combine")
            expr = f"tl.reduce({acc}, {ax}, _prod_combine, keep_dims=True)"
        else:
            best = "max" if op == "argmax" else "min"
            code.add(f"{out}_best = {extreme(best, acc, ax, self.helpers)}")
            if split:
                code.add(f"{out}_val = {out}_best")
            expr = (
                f"tl.min(tl.where({holds_extreme(acc, f'{out}_best')}, {acc}_idx, {BIG_INDEX}), "
                f"axis={ax}, "
                "keep_dims=True)" + ("" if split else ".to(tl.int64)")
            )
        code.add(f"{out} = {expr}")
        return out
