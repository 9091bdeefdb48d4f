"""The structure stage: capture a task's graph, fuse it, and render Triton kernels from templates.

capture(task, size) -> OpGraph           torch.export + core-ATen decompositions (graph.py)
recognise_attention(graph) -> OpGraph    written-out attention -> one SDPA node
                                         (recognise_attention.py)
lower(graph) -> OpGraph                  composite ops -> primitives (lower.py)
fuse(graph) -> Partition                 fusion groups with their domains (fusion.py, axes.py)
plan_task(task, device, size)            skills checked per group, ranked designs (plan.py)
emit(partition, design, source) -> str   one self-contained ModelNew file (emit.py)
"""

from __future__ import annotations

from kernelwright.design.capture import capture
from kernelwright.design.choices import Design, GroupChoice, design_from_json
from kernelwright.design.emit import emit
from kernelwright.design.fusion import Group, Partition, fuse
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import DesignError
from kernelwright.design.lower import lower
from kernelwright.design.plan import DesignPlan, plan_task
from kernelwright.design.recognise_attention import recognise_attention

__all__ = [
    "Design",
    "DesignError",
    "DesignPlan",
    "Group",
    "GroupChoice",
    "OpGraph",
    "Partition",
    "capture",
    "design_from_json",
    "emit",
    "fuse",
    "lower",
    "plan_task",
    "recognise_attention",
]
