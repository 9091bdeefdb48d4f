"""Facts about a fusion group that the skills' conditions read (shapes at the design's size)."""

from __future__ import annotations

from kernelwright.design.aten import REDUCTIONS, classify, scan_info
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import Ref
from kernelwright.design.kernel.passes import plan_passes
from kernelwright.design.kernel.pointwise import contiguous_suffix
from kernelwright.design.kernel.reduction import schedule_of, splittable
from kernelwright.design.kernel.relay import relay_applies
from kernelwright.skills.conditions import GroupFacts

H200_SMS = 132


def group_facts(
    partition: Partition, group: Group, device: str = "cuda", sm_count: int = H200_SMS
) -> GroupFacts:
    """The facts of one fused group (pointwise, reduction, scan, select or pool)."""
    graph = partition.graph
    dtypes = tuple(sorted({graph.meta(i).dtype for i in group.inputs}))
    if group.kind == "pool":
        out = graph.meta(group.outputs[0])
        node = graph.node(group.nodes[0])
        from kernelwright.design.kernel.pool import pool_spec

        spec = pool_spec(node)
        window = 1
        for k in spec.kernel:
            window *= k
        return GroupFacts(
            "pool",
            "",
            out.hint,
            window,
            out.numel,
            1,
            dtypes=dtypes,
            device=device,
            sm_count=sm_count,
            window=window,
        )
    layout = group.layout
    assert layout is not None
    domain = layout.hint
    red = set(layout.reduce)
    red_len = 1
    par_len = 1
    inner = 1
    for d, s in enumerate(domain):
        if d in red:
            red_len *= s
        else:
            par_len *= s
            if red and d > max(red):
                inner *= s
    if group.kind == "pointwise":
        split = contiguous_suffix(graph, group)
        run = 1
        for s in domain[split if split else 0 :]:
            run *= s
        return GroupFacts(
            "pointwise",
            "",
            domain,
            1,
            par_len,
            run,
            flat=split == 0,
            dtypes=dtypes,
            device=device,
            sm_count=sm_count,
        )
    schedule = schedule_of(layout)
    if group.kind == "select":
        from kernelwright.design.kernel.select import select_k

        return GroupFacts(
            "select",
            schedule,
            domain,
            red_len,
            par_len,
            inner,
            dtypes=dtypes,
            device=device,
            sm_count=sm_count,
            k=select_k(graph, group),
        )
    if group.kind == "scan":
        scan = next(n for n in group.nodes if classify(graph.node(n)) == "scan")
        node = graph.node(scan)
        src = node.args[0]
        assert isinstance(src, Ref)
        _, _, reverse = scan_info(node, graph.meta(src.name).rank)
        return GroupFacts(
            "scan",
            schedule,
            domain,
            red_len,
            par_len,
            inner,
            reverse=reverse,
            dtypes=dtypes,
            device=device,
            sm_count=sm_count,
        )
    args = (graph, list(group.nodes), list(group.inputs), list(group.outputs), layout)
    plain = plan_passes(*args, online=False, welford=False)
    folded = plan_passes(*args, online=True, welford=True)
    gather = any(classify(graph.node(n)) == "gather" for n in group.nodes)
    indexed = any(REDUCTIONS.get(graph.node(n).target) in ("argmax", "argmin") for n in group.nodes)
    return GroupFacts(
        "reduction",
        schedule,
        domain,
        red_len,
        par_len,
        inner,
        n_passes=plain.n_passes,
        folded_passes=folded.n_passes,
        online_pattern=bool(folded.online),
        welford_pattern=bool(folded.welford),
        splittable=splittable(graph, group, plain),
        dtypes=dtypes,
        device=device,
        sm_count=sm_count,
        has_gather=gather,
        indexed=indexed,
        stats_then_write=not relay_applies(graph, group, folded),
        full_outputs=any(layout.is_full(o) for o in group.outputs if o in layout.axes),
    )
