"""Accumulators of reduction kernels: how each reduction is initialised, updated per block and
finished, in one pass (the whole extent in registers) or looped (per-lane accumulators).

    sum / mean      acc += where(mask, v, 0)           tl.sum(acc) (/ n)
    max / min       acc = maximum(acc, where(mask, v, -inf))
    prod            acc *= where(mask, v, 1)           tl.reduce(acc, _prod_combine)
    argmax / argmin per lane: first extreme value and its index; then the smallest index among
                    the lanes holding the row's extreme (torch's first-index tie rule)
    online softmax  running maximum and a sum rescaled to it (per row)
    Welford         per-block count, mean and M2 merged with Chan's formula (per row)

Masked lanes hold the reduction's neutral element, so padding never changes a result.
"""

from __future__ import annotations

from typing import Protocol

from kernelwright.design.axes import Layout
from kernelwright.design.graph import OpGraph, Ref
from kernelwright.design.kernel.common import Code, DesignError
from kernelwright.design.kernel.emitter import BodyEmitter, Context, IndexGroup, safe_name
from kernelwright.design.kernel.passes import PassPlan
from kernelwright.design.ops import REDUCTIONS

NEG_INF = '-float("inf")'
POS_INF = 'float("inf")'
BIG_INDEX = "2147483647"


class FrameLike(Protocol):
    """What the accumulators need to know about a kernel's tile (see ``reduction.Frame``)."""

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
    def red_index(self) -> str: ...

    def reduced_shape(self) -> str: ...

    def acc_shape(self) -> str: ...


class Accumulators:
    """Mixin of :class:`~kernelwright.design.kernel.reduction.ReductionWriter`."""

    graph: OpGraph
    layout: Layout
    plan: PassPlan
    helpers: set[str]

    def op(self, r: str) -> str:
        return REDUCTIONS[self.graph.node(r).target]

    def is_int(self, name: str) -> bool:
        return not self.graph.meta(name).is_float

    def src(self, r: str) -> str:
        a = self.graph.node(r).args[0]
        assert isinstance(a, Ref)
        return a.name

    def _val(self, em: BodyEmitter, name: str, ctx: Context, code: Code) -> str:
        lines: list[str] = []
        expr = em.value(name, ctx, lines)
        code.extend(lines)
        return expr

    def reduce_onepass(
        self, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code
    ) -> str:
        op, src = self.op(r), self.src(r)
        v = self._val(em, src, ctx, code)
        mask = em.mask_for(src, ctx) or "True"
        out = em.var(r, ctx)
        ax = f.red_axis
        full = self.layout.is_full(src)
        if not full:  # the input is constant along the reduced axis
            code.add(f"{out} = {self._constant_reduce(op, v, f)}")
            return out
        if op in ("sum", "mean"):
            zero = "0" if self.is_int(src) else "0.0"
            cast = ".to(tl.int64)" if self.is_int(src) else ""
            expr = f"tl.sum(tl.where({mask}, {v}{cast}, {zero}), axis={ax}, keep_dims=True)"
            if op == "mean":
                expr = f"{expr} / {f.n_red}"
            code.add(f"{out} = {expr}")
        elif op in ("max", "min"):
            fill = NEG_INF if op == "max" else POS_INF
            code.add(f"{out} = tl.{op}(tl.where({mask}, {v}, {fill}), axis={ax}, keep_dims=True)")
        elif op == "prod":
            self.helpers.add("_prod_combine")
            code.add(
                f"{out} = tl.reduce(tl.where({mask}, {v}, 1.0), {ax}, _prod_combine, "
                "keep_dims=True)"
            )
        elif op in ("argmax", "argmin"):
            best, fill = ("max", NEG_INF) if op == "argmax" else ("min", POS_INF)
            code.add(
                f"{out}_best = tl.{best}(tl.where({mask}, {v}, {fill}), axis={ax}, keep_dims=True)"
            )
            code.add(
                "# first index holding the extreme value (torch's tie rule)",
                f"{out} = tl.min(tl.where(({v} == {out}_best) & {mask}, {f.red_index}, "
                f"{BIG_INDEX}), axis={ax}, keep_dims=True).to(tl.int64)",
            )
        else:
            raise DesignError(f"no one-pass form for {op}")
        return out

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
                "# online softmax: a running maximum and the sum of exp(x - running max)",
                f"{safe_name(m)}_run = tl.full({f.reduced_shape()}, {NEG_INF}, tl.float32)",
                f"{safe_name(r)}_run = tl.zeros({f.reduced_shape()}, tl.float32)",
            )
            return
        if r in self.plan.online.values():
            return
        if r in self.plan.welford:
            m = self.plan.welford[r]
            code.add(
                f"{safe_name(m)}_n = tl.zeros({f.reduced_shape()}, tl.float32)  # Welford: count,",
                f"{safe_name(m)}_run = tl.zeros({f.reduced_shape()}, tl.float32)  # running mean,",
                f"{safe_name(r)}_m2 = tl.zeros({f.reduced_shape()}, tl.float32)  # M2",
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
            code.add(f"{acc}_idx = tl.zeros({shape}, tl.int32)")

    def acc_update(self, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code) -> None:
        op, src = self.op(r), self.src(r)
        ax = f.red_axis
        if r in self.plan.online.values() or r in self.plan.welford.values():
            return
        if r in self.plan.online:
            m = self.plan.online[r]
            e_name = self.src(m)
            e = self._val(em, e_name, ctx, code)
            mask = em.mask_for(e_name, ctx) or "True"
            mr, sr = f"{safe_name(m)}_run", f"{safe_name(r)}_run"
            code.add(
                "# online softmax: keep a running maximum and rescale the running sum to it",
                f"e_blk = tl.where({mask}, {e}, {NEG_INF})",
                f"m_new = tl.maximum({mr}, tl.max(e_blk, axis={ax}, keep_dims=True))",
                f"m_safe = tl.where(m_new == {NEG_INF}, 0.0, m_new)  # empty rows stay at 0",
                f"{sr} = {sr} * tl.exp({mr} - m_safe) + tl.sum(tl.exp(e_blk - m_safe), "
                f"axis={ax}, keep_dims=True)",
                f"{mr} = m_new",
            )
            return
        if r in self.plan.welford:
            m = self.plan.welford[r]
            e_name = self.src(m)
            e = self._val(em, e_name, ctx, code)
            mask = em.mask_for(e_name, ctx) or "True"
            n, mean, m2 = f"{safe_name(m)}_n", f"{safe_name(m)}_run", f"{safe_name(r)}_m2"
            code.add(
                "# Welford/Chan: statistics of this block, merged into the running ones",
                f"blk_n = tl.sum(tl.where({mask}, 1.0, 0.0), axis={ax}, keep_dims=True)",
                f"blk_mean = tl.sum(tl.where({mask}, {e}, 0.0), axis={ax}, keep_dims=True) "
                "/ tl.maximum(blk_n, 1.0)",
                f"blk_dev = tl.where({mask}, {e} - blk_mean, 0.0)",
                f"blk_m2 = tl.sum(blk_dev * blk_dev, axis={ax}, keep_dims=True)",
                f"tot = tl.maximum({n} + blk_n, 1.0)",
                f"delta = blk_mean - {mean}",
                f"{mean} = {mean} + delta * (blk_n / tot)",
                f"{m2} = {m2} + blk_m2 + delta * delta * ({n} * blk_n / tot)",
                f"{n} = {n} + blk_n",
            )
            return
        v = self._val(em, src, ctx, code)
        mask = em.mask_for(src, ctx) or "True"
        acc = f"acc_{safe_name(r)}"
        if op in ("sum", "mean"):
            zero = "0" if self.is_int(src) else "0.0"
            cast = ".to(tl.int64)" if self.is_int(src) else ""
            code.add(f"{acc} = {acc} + tl.where({mask}, {v}{cast}, {zero})")
        elif op in ("max", "min"):
            fill = NEG_INF if op == "max" else POS_INF
            fn = "tl.maximum" if op == "max" else "tl.minimum"
            code.add(f"{acc} = {fn}({acc}, tl.where({mask}, {v}, {fill}))")
        elif op == "prod":
            code.add(f"{acc} = {acc} * tl.where({mask}, {v}, 1.0)")
        elif op in ("argmax", "argmin"):
            cmp = ">" if op == "argmax" else "<"
            code.add(
                f"better = {mask} & ({v} {cmp} {acc})  # strict: each lane keeps its first extreme",
                f"{acc}_idx = tl.where(better, {f.red_index}, {acc}_idx)",
                f"{acc} = tl.where(better, {v}, {acc})",
            )

    def acc_finish(
        self, em: BodyEmitter, f: FrameLike, ctx: Context, r: str, code: Code, split: bool
    ) -> str:
        op = self.op(r)
        ax = f.red_axis
        out = em.var(r, ctx)
        if r in self.plan.online:
            m = self.plan.online[r]
            em.done[em.key(m, ctx)] = f"{safe_name(m)}_run"
            code.add(f"{out} = {safe_name(r)}_run")
            return out
        if r in self.plan.online.values():
            return f"{safe_name(r)}_run"
        if r in self.plan.welford:
            m = self.plan.welford[r]
            em.done[em.key(m, ctx)] = f"{safe_name(m)}_run"
            code.add(f"{out} = {safe_name(r)}_m2 / tl.maximum({safe_name(m)}_n, 1.0)")
            return out
        if r in self.plan.welford.values():
            return f"{safe_name(r)}_run"
        acc = f"acc_{safe_name(r)}"
        if op in ("sum", "mean"):
            expr = f"tl.sum({acc}, axis={ax}, keep_dims=True)"
            if op == "mean" and not split:
                expr = f"{expr} / {f.n_red}"
        elif op in ("max", "min"):
            expr = f"tl.{op}({acc}, axis={ax}, keep_dims=True)"
        elif op == "prod":
            self.helpers.add("_prod_combine")
            expr = f"tl.reduce({acc}, {ax}, _prod_combine, keep_dims=True)"
        else:
            best = "max" if op == "argmax" else "min"
            code.add(f"{out}_best = tl.{best}({acc}, axis={ax}, keep_dims=True)")
            if split:
                code.add(f"{out}_val = {out}_best")
            expr = (
                f"tl.min(tl.where({acc} == {out}_best, {acc}_idx, {BIG_INDEX}), axis={ax}, "
                "keep_dims=True)" + ("" if split else ".to(tl.int64)")
            )
        code.add(f"{out} = {expr}")
        return out
