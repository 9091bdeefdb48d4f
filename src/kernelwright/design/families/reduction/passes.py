"""Pass planning for reduction groups: which reduction is accumulated in which sweep of a row.

A reduction can start once every per-row value its input needs is known. Softmax needs the row
maximum before the sum of exponentials, LayerNorm the mean before the variance, so a row that
does not fit in registers is swept several times:

    level 0   values computed from loads only           (x, x*x, |x|...)
    pass k    accumulates the reductions whose inputs need results of passes < k
    avail(v)  number of passes after which per-row value v is known

Two expert rewrites fold a dependent reduction into the pass of the one it depends on:

    online softmax   sum(exp(E - max(E)))  kept with a running maximum and a rescaled sum
    Welford          mean((E - mean(E))^2) kept as a running mean and M2
(both per lane, merged across lanes once the sweep ends: see ``accumulate``)

Full-shape outputs are written in the pass where they can first be computed (a residual
``x + r`` already in pass 0), the others in a final store pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernelwright.design.aten import REDUCTIONS, classify
from kernelwright.design.axes import Layout
from kernelwright.design.graph import Node, OpGraph, Ref


@dataclass
class PassPlan:
    """The sweeps of a reduction group.

    Attributes:
        reductions: reduction node names, in group order.
        pass_of: reduction -> the pass that accumulates it.
        online: sum-of-exponentials reduction -> the max reduction it is folded with.
        welford: variance reduction -> the mean reduction it is folded with.
        avail: per-row value -> passes needed before it can be computed.
        need: full value -> the first pass in which it can be computed.
        stores: full output -> the pass that writes it.
        n_passes: number of sweeps (reduction passes plus a store pass when needed).
    """

    reductions: list[str] = field(default_factory=list)
    pass_of: dict[str, int] = field(default_factory=dict)
    online: dict[str, str] = field(default_factory=dict)
    welford: dict[str, str] = field(default_factory=dict)
    avail: dict[str, int] = field(default_factory=dict)
    need: dict[str, int] = field(default_factory=dict)
    stores: dict[str, int] = field(default_factory=dict)
    n_passes: int = 0


def plan_passes(
    graph: OpGraph,
    nodes: list[str],
    inputs: list[str],
    outputs: list[str],
    layout: Layout,
    *,
    online: bool = True,
    welford: bool = True,
) -> PassPlan:
    """Plan the sweeps; ``online`` / ``welford`` enable the two rewrites."""
    plan = PassPlan()
    members = set(nodes)

    def level(name: str) -> tuple[bool, int]:
        """(is full, pass/avail) of a value."""
        if name not in members:
            full = name in layout.axes and layout.is_full(name)
            return full, 0
        if name in plan.need:
            return True, plan.need[name]
        return False, plan.avail.get(name, 0)

    for name in nodes:
        node = graph.node(name)
        kind = classify(node)
        full = layout.is_full(name) if name in layout.axes else False
        deps = [level(r) for r in node.refs() if r in layout.axes or r in members]
        if kind == "reduction":
            src = node.args[0]
            assert isinstance(src, Ref)
            src_full, src_level = level(src.name)
            k = src_level if src_full else 0
            plan.reductions.append(name)
            plan.pass_of[name] = k
            plan.avail[name] = k + 1
            continue
        if kind == "gather":
            plan.avail[name] = max([lv for _, lv in deps], default=0)
            continue
        lvl = max([lv for _, lv in deps], default=0)
        if full:
            plan.need[name] = lvl
        else:
            plan.avail[name] = lvl
    if online:
        _fold_online(graph, plan, members)
    if welford:
        _fold_welford(graph, plan, members)
    if plan.online or plan.welford:
        _replan(graph, nodes, layout, plan, members)
    n_red = max(plan.pass_of.values(), default=-1) + 1
    for o in outputs:
        if o in plan.need:
            plan.stores[o] = plan.need[o]
    plan.n_passes = max([n_red, *[p + 1 for p in plan.stores.values()]])
    return plan


def _replan(
    graph: OpGraph, nodes: list[str], layout: Layout, plan: PassPlan, members: set[str]
) -> None:
    """Recompute levels after folding (folded reductions keep their new pass)."""
    fixed = {
        **{s: plan.pass_of[s] for s in plan.online},
        **{v: plan.pass_of[v] for v in plan.welford},
    }
    plan.avail.clear()
    plan.need.clear()
    for name in nodes:
        node = graph.node(name)
        kind = classify(node)
        full = layout.is_full(name) if name in layout.axes else False

        def lv(r: str) -> int:
            if r not in members:
                return 0
            return plan.need.get(r, plan.avail.get(r, 0))

        deps = [lv(r) for r in node.refs() if r in layout.axes or r in members]
        if kind == "reduction":
            src = node.args[0]
            assert isinstance(src, Ref)
            k = fixed.get(name, lv(src.name) if layout.is_full(src.name) else 0)
            plan.pass_of[name] = k
            plan.avail[name] = k + 1
            continue
        lvl = max(deps, default=0)
        if full:
            plan.need[name] = lvl
        else:
            plan.avail[name] = lvl


def _op(graph: OpGraph, name: str) -> Node | None:
    return graph.node(name) if graph.has_node(name) else None


def _fold_online(graph: OpGraph, plan: PassPlan, members: set[str]) -> None:
    for s in plan.reductions:
        node = graph.node(s)
        if REDUCTIONS[node.target] != "sum":
            continue
        e = _op(graph, _ref(node.args[0]))
        if e is None or e.target != "aten.exp.default" or e.name not in members:
            continue
        sub = _op(graph, _ref(e.args[0]))
        if sub is None or sub.target != "aten.sub.Tensor" or sub.kwarg("alpha", 1) != 1:
            continue
        src, m = _ref(sub.args[0]), _ref(sub.args[1])
        mnode = _op(graph, m)
        if mnode is None or m not in plan.pass_of or REDUCTIONS.get(mnode.target) != "max":
            continue
        if _ref(mnode.args[0]) != src or plan.pass_of[s] != plan.pass_of[m] + 1:
            continue
        plan.online[s] = m
        plan.pass_of[s] = plan.pass_of[m]


def _fold_welford(graph: OpGraph, plan: PassPlan, members: set[str]) -> None:
    for v in plan.reductions:
        node = graph.node(v)
        if REDUCTIONS[node.target] != "mean":
            continue
        sq = _op(graph, _ref(node.args[0]))
        if sq is None or sq.name not in members:
            continue
        if (
            sq.target == "aten.mul.Tensor"
            and sq.args[0] == sq.args[1]
            or sq.target == "aten.pow.Tensor_Scalar"
            and sq.args[1] == 2
        ):
            d = _op(graph, _ref(sq.args[0]))
        else:
            continue
        if d is None or d.target != "aten.sub.Tensor" or d.kwarg("alpha", 1) != 1:
            continue
        src, m = _ref(d.args[0]), _ref(d.args[1])
        mnode = _op(graph, m)
        if mnode is None or m not in plan.pass_of or REDUCTIONS.get(mnode.target) != "mean":
            continue
        if _ref(mnode.args[0]) != src or plan.pass_of[v] != plan.pass_of[m] + 1:
            continue
        plan.welford[v] = m
        plan.pass_of[v] = plan.pass_of[m]


def _ref(a: object) -> str:
    return a.name if isinstance(a, Ref) else ""
