"""Kernel families: each kind of fusion group is one unit behind one protocol (``base.Family``):
when it applies (the group kind, its skills' conditions and the facts they read), its default
parameters and tunable space (its skill files and heuristics), and how it renders a group.

    family       group kind   templates                                        skills
    pointwise    pointwise    flat, rows x contiguous columns                  elementwise-*
    reduction    reduction    one pass, looped, split, team,                   row-*, column-*, ...
                              split statistics, relay (+ folds)
    scan         scan         row walk, column walk, chained look-back          scan-*
    pool         pool         1-3-D max and average windows: taps from         pool-*
                              aligned vectors, or the W taps a tile axis
    topk         select       sorted lanes, k rounds                            topk-rounds
    gemm         gemm         tiled (persistent, grouped; TMA or pointer        gemm-*
                              loads), split-K; epilogue on the accumulator
    conv         conv         implicit GEMM (2-D, groups 1; patch gathers,      conv-*
                              grouped order; the GEMM epilogue), or the
                              vendor conv + an epilogue kernel
    attention    attention    flash (online softmax over key blocks; causal,   attention-flash*
                              masks, grouped-query heads)

Each family's folder holds its templates, ``skills/*.toml``, ``conditions.py``, ``defaults.py``
and the ``measurements.csv`` its defaults follow. Its tests are ``tests/unit/design/families/
<family>/`` and its golden snapshots ``tests/golden/snapshots/<family>/``.
"""

from __future__ import annotations

from kernelwright.design.families.attention import AttentionFamily
from kernelwright.design.families.base import Family
from kernelwright.design.families.conv import ConvFamily
from kernelwright.design.families.gemm import GemmFamily
from kernelwright.design.families.pointwise import PointwiseFamily
from kernelwright.design.families.pool import PoolFamily
from kernelwright.design.families.reduction import ReductionFamily
from kernelwright.design.families.scan import ScanFamily
from kernelwright.design.families.topk import TopKFamily
from kernelwright.design.kernel.common import DesignError

FAMILIES: dict[str, Family] = {
    f.kind: f
    for f in (
        PointwiseFamily(),
        ReductionFamily(),
        ScanFamily(),
        PoolFamily(),
        TopKFamily(),
        GemmFamily(),
        ConvFamily(),
        AttentionFamily(),
    )
}


def family(kind: str) -> Family:
    """The family rendering groups of ``kind``.

    Raises:
        DesignError: no family renders that kind (the message lists the known ones).
    """
    found = FAMILIES.get(kind)
    if found is None:
        raise DesignError(f"no kernel family renders {kind} groups; known: {', '.join(FAMILIES)}")
    return found


__all__ = ["FAMILIES", "Family", "family"]
