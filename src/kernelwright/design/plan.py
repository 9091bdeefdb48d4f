"""A task's design plan: its captured graph, fusion groups, the skills' verdicts and the ranked
designs, plus what the archive already knows (skill priors, warm-start measurements)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernelwright.design.canonical import canonical_design, design_key
from kernelwright.design.capture import capture
from kernelwright.design.choices import Design, design_from_json
from kernelwright.design.emit import emit
from kernelwright.design.fusion import Partition, fuse
from kernelwright.design.graph import OpGraph
from kernelwright.design.kernel.common import DesignError
from kernelwright.design.lower import lower
from kernelwright.design.recognise_attention import recognise_attention
from kernelwright.design.structures import GroupOptions, group_options, rank_designs
from kernelwright.errors import ConfigError
from kernelwright.records import Candidate, Task
from kernelwright.skills.library import SkillLibrary

# A Hopper GPU does about 100 FLOP of tensor-core math in the time its memory moves one byte (H200:
# ~400 TFLOP/s of TF32, ~4 TB/s): the exchange rate between a product's work and a sweep's
FLOP_PER_BYTE = 100
# How much higher a skill ranks when a profile of the kernel to improve shows a limit it relieves
RELIEF = 1.5


@dataclass
class DesignPlan:
    """Everything stage 1 decided for one task at one size."""

    task: Task
    size: str
    device: str
    partition: Partition
    library: SkillLibrary
    groups: list[GroupOptions]
    designs: list[Design]
    prior: Mapping[str, float] = field(default_factory=dict)
    archive: Any | None = None
    relieved: tuple[str, ...] = ()  # skills ranked higher for a limit a profile showed
    # the archive's measurements of each (skill, variant) on other tasks, read once a run:
    # reading a large archive takes seconds, and the tuner asks at every step
    _measured: dict[tuple[str, str], list[tuple[dict[str, int], float, str]]] = field(
        default_factory=dict, repr=False, compare=False)

    def render(self, design: Design) -> str:
        """The ModelNew source of ``design`` (raises DesignError when it cannot be rendered)."""
        notes = {
            g.group.id: "; ".join(f"{s}: {' '.join(r)}" for s, r in g.skipped)
            for g in self.groups
            if not g.options
        }
        chosen = {c.group for c in design.choices}
        return emit(
            self.partition,
            design,
            self.task.source,
            task_name=self.task.name,
            size=self.size,
            notes=notes,
            vendor={g.group.id for g in self.groups if g.options and g.group.id not in chosen},
        )

    def constraint_names(self) -> dict[int, dict[str, int]]:
        """Each group's quantities the skills' constraints may name (``REDUCED``, ``SMS``...)."""
        return {g.group.id: g.facts.constraint_names() for g in self.groups}

    def group_weights(self) -> dict[int, float]:
        """Each fused group's rough share of the run time, in bytes: its domain read and written
        once in 4-byte values, plus a product's (or attention's) FLOPs at FLOP_PER_BYTE. Only the
        order matters: the tuner spends its budget on the heaviest groups first."""
        weights = {}
        for g in self.groups:
            f = g.facts
            product = f.attention or f.gemm
            flops = product.flops if product is not None else 0
            weights[g.group.id] = 8.0 * f.numel + flops / FLOP_PER_BYTE
        return weights

    def canonical_key(self, design: Design) -> str:
        """The key of the kernel ``design`` renders at this plan's shapes: parameters clamped by
        their templates (``design.canonical``), so equal keys are one candidate."""
        facts = {g.group.id: g.facts for g in self.groups}
        return design_key(canonical_design(design, facts, self.library))

    def candidate_key(self, candidate: Candidate) -> str | None:
        """:meth:`canonical_key` of a template candidate's design; None for a candidate that
        carries no design (hand-written, LLM) or one this plan cannot read back."""
        if not candidate.design.get("groups"):
            return None
        try:
            design = design_from_json(candidate.design, candidate.params)
            return "design:" + self.canonical_key(design)
        except (ConfigError, KeyError, ValueError, TypeError):  # a skill this library lacks
            return None

    def framework_groups(self) -> list[dict[str, str]]:
        """Groups left to PyTorch, with why."""
        out = []
        for g in self.partition.groups:
            if g.kind == "framework":
                ops = ", ".join(self.partition.graph.node(n).target for n in g.nodes)
                out.append({"group": f"g{g.id}", "ops": ops, "why": g.note})
        for go in self.groups:
            if not go.options:
                ops = ", ".join(self.partition.graph.node(n).target for n in go.group.nodes)
                why = "; ".join(f"{s}: {' '.join(r)}" for s, r in go.skipped) or "no skill applies"
                out.append({"group": f"g{go.group.id}", "ops": ops, "why": why})
        return out

    def warm_start(self, design: Design) -> Sequence[tuple[dict[str, int], float, str]]:
        """Measurements of each group's skill on other tasks, for the tuner: (the group's
        parameters under the tuning space's names, ms, source). A group of a larger design
        brings the timings of candidates that differ in that group's parameters alone
        (``matching_measurements``), labelled per group here too. Other tasks' measurements
        are read once a plan (a run): those another worker archives meanwhile are not seen."""
        if self.archive is None or self.device != "cuda":
            return []
        from kernelwright.skills.stats import matching_measurements

        found = []
        for choice in design.choices:
            key = (choice.skill, choice.variant)
            if key not in self._measured:
                self._measured[key] = matching_measurements(self.archive, *key,
                                                            self.task.sha256)
            for params, ms, source in self._measured[key]:
                label = source if len(design.choices) == 1 else f"{source}>g{choice.group}"
                found.append(({f"g{choice.group}_{k}": v for k, v in params.items()}, ms, label))
        return found


def plan_task(
    task: Task,
    device: str,
    size: str,
    *,
    archive: Any | None = None,
    isolate: bool = True,
    library: SkillLibrary | None = None,
    limit: int = 12,
    diagnosed: Sequence[str] = (),
    precision: str = "fp32",
    graph: OpGraph | None = None,
) -> DesignPlan:
    """Capture, lower and fuse ``task``; check the skills for the dtypes the groups read
    under the ``precision`` policy; rank the designs. ``diagnosed``: the limits a hardware
    profile showed (``hardware.diagnose`` kinds); a skill that relieves one ranks
    :data:`RELIEF` times higher within its cost class. ``graph``: ``task``'s graph at
    ``size``, captured already (``capture.start_capture``)."""
    if graph is None:
        graph = capture(task, size, isolated=isolate)
    try:
        partition = fuse(lower(recognise_attention(graph)))
    except Exception as exc:  # an unsupported graph shape: say so instead of a traceback
        raise DesignError(
            f"{task.path}: kernelwright could not lower and fuse this graph "
            f"({type(exc).__name__}: {exc}); please report it with the task file"
        ) from exc
    lib = library or SkillLibrary.builtin()
    prior: Mapping[str, float] = {}
    if archive is not None and device == "cuda":
        from kernelwright.skills.stats import skill_priors

        prior = skill_priors(archive, lib)
    relieved = tuple(s.id for s in lib if set(s.relieves) & set(diagnosed))
    if relieved:
        prior = {**prior, **{s: prior.get(s, 1.0) * RELIEF for s in relieved}}
    groups = [group_options(partition, g, lib, device, prior, precision) for g in partition.fused]
    designs = rank_designs(groups, limit)
    held = {s for g in groups for o in g.options for s in (o.choice.skill, *o.choice.options)}
    return DesignPlan(task, size, device, partition, lib, groups, designs, prior, archive,
                      tuple(s for s in relieved if s in held))
