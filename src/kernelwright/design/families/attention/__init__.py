"""Scaled-dot-product attention, flash style (group kind ``attention``).

    spec.py       the node's operands and options (causal, scale, mask, grouped-query heads)
    kernels.py    the flash kernel: BLOCK_M queries of one (batch, head) a program, an online
                  softmax over blocks of keys, tl.dot for q k^T and p v with fp32 accumulation
    prelude.py    the lines every wrapper starts with: operands, sizes, scale, mask, strides
    launch.py     the flash wrapper: the math the policy allows, blocks, stages
    decode.py     the decode variant for a few queries: the query rows sharing a key/value
                  head in one program (each key block loaded once for all), IEEE fp32
                  products on the CUDA cores, keys split over programs where rows are few
    conditions.py, defaults.py   the skills' conditions and default parameters

Capture keeps ``F.scaled_dot_product_attention`` one node (``capture.KEPT_WHOLE``) instead of
its decomposition into two products and a softmax, so the scores are never written; attention
written out as those products and a softmax is rewritten into the same node before fusion
(``design/recognise_attention.py``), which the rendered file's header says. A node the
skills refuse (dropout, head dims past 256, a mask of another kind) runs in PyTorch. The math
follows the GEMM family's policy rule (``gemm/precision.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from kernelwright.design.choices import GroupChoice
from kernelwright.design.families.attention import conditions, defaults  # noqa: F401 (register)
from kernelwright.design.families.attention.decode import DECODE_DEFAULTS, DOT_ROWS
from kernelwright.design.families.attention.launch import (
    ATTN_DESCRIPTOR,
    ATTN_LAUNCH,
    ATTN_STAGES,
    DEFAULTS,
    render_attention,
)
from kernelwright.design.families.attention.spec import attention_shape, attention_spec
from kernelwright.design.families.gemm.helpers import PY_HELPERS as GEMM_HELPERS
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.skills.conditions import GroupFacts


class AttentionFamily:
    """One flash-attention kernel per ``scaled_dot_product_attention`` node (a decode kernel,
    and a combine kernel where keys are split, for a few queries)."""

    kind = "attention"
    prefix = "attn"
    py_helpers: Mapping[str, str] = {
        "_attn_stages": ATTN_STAGES,
        "_attn_descriptor": ATTN_DESCRIPTOR,
        "_cuda_device": GEMM_HELPERS["_cuda_device"],
        "_launch_fitting": ATTN_LAUNCH,
        "_dot_operands": GEMM_HELPERS["_dot_operands"],
        "_dot_precision": GEMM_HELPERS["_dot_precision"],
    }

    @property
    def skills(self) -> Traversable:
        return resources.files(__name__) / "skills"

    def facts(self, partition: Partition, group: Group, device: str, sm_count: int) -> GroupFacts:
        """The attention's shape and options (``GroupFacts.attention``); the keys are the
        reduced length, the output's rows the parallel length."""
        graph = partition.graph
        spec = attention_spec(graph, group)
        shape = attention_shape(graph, spec)
        out = graph.meta(group.outputs[0])
        return GroupFacts(
            "attention",
            "",
            out.hint,
            shape.n,
            shape.batch * shape.heads * shape.m,
            shape.dv,
            dtypes=tuple(sorted({graph.meta(x).dtype for x in (spec.q, spec.k, spec.v)})),
            device=device,
            sm_count=sm_count,
            attention=shape,
        )

    def cost(
        self, partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
    ) -> float:
        """The inverse of the fraction of the SMs the programs fill (one program per block of
        queries of one head; the decode variant one per block of rows sharing a key/value head
        and key split)."""
        a = facts.attention
        assert a is not None
        if choice.variant == "decode":
            d = {**DECODE_DEFAULTS, **choice.params}
            group_rows = a.heads // max(1, a.kv_heads) * a.m
            if int(d["DOT"]):  # tl.dot's blocks of 16 rows, BLOCK_N keys a step
                rows, keys = DOT_ROWS, max(16, int(d["BLOCK_N"]))
            else:
                rows = min(int(d["ROWS"]), 1 << max(0, (group_rows - 1).bit_length()))
                keys = max(16 // rows, int(d["BLOCK_N"]) // rows)
            programs = a.batch * a.kv_heads * -(-group_rows // rows)
            block_n = min(keys, 1 << max(0, (a.n - 1).bit_length()))
            split = max(1, min(-(-int(d["SPLIT_PROGRAMS"]) // programs), -(-a.n // (4 * block_n))))
            return 1.0 / min(1.0, programs * split / facts.sm_count)
        p = {**DEFAULTS, **choice.params}
        block_m = max(16, min(int(p["BLOCK_M"]), 1 << max(0, (a.m - 1).bit_length())))
        programs = a.batch * a.heads * -(-a.m // block_m)
        return 1.0 / min(1.0, programs / facts.sm_count)

    def render(
        self, graph: OpGraph, group: Group, choice: GroupChoice, name: str
    ) -> RenderedKernel:
        return render_attention(graph, group, name, choice.variant, dict(choice.params))
