"""The design decisions a tree or population search moves through, and what a verdict is worth.

A design is a sequence of decisions: for each fusion group, which skill and template variant
drive it (its structure), then the values of that skill's tuned parameters. The plan gives the
choices in order of promise:

    DecisionSpace.structures       the ranked designs (best option everywhere, then one group
                                   changed), each with its skills' default parameters
    DecisionSpace.options[g]       group g's ranked choices (skill, variant, modifiers, defaults)
    .parameter_moves(design)       every design one tuned parameter away (the next smaller or
                                   larger value the skill allows, within its constraints)
    .structure_moves(design)       every design with one group's choice replaced (or, of
                                   several, one product group left to PyTorch)
    .accurate_move(design)         the design with its knobs that trade accuracy for speed at
                                   their accurate values (``Param.accurate``): what a search
                                   proposes next for a design the harness found incorrect
    .key(design)                   the kernel it renders at the task's shapes (equal keys: one
                                   candidate; see ``design.canonical``)

    value(verdict, reference)      in [0, 1): 0 when incorrect, else r / (1 + r) with
                                   r = reference / candidate's cost (a logistic of the log
                                   gain: 0.5 at parity); the cost is the run's objective
                                   (time, energy or their product), the reference eager's
                                   when measured, else the run's best correct candidate's
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernelwright.design.choices import Design, GroupChoice, design_from_json
from kernelwright.design.kernel.common import DesignError
from kernelwright.design.structures import PRODUCT_KINDS
from kernelwright.errors import ConfigError
from kernelwright.hardware.energy import Objective
from kernelwright.records import Candidate, Verdict
from kernelwright.search.proposer import Proposal, Trial, candidate_cost, eager_cost
from kernelwright.search.tunable import DesignSpace
from kernelwright.skills.library import SkillLibrary

Move = tuple[Design, str]  # a design and the decision that changed, for the report


@dataclass(frozen=True)
class DecisionSpace:
    """See the module docstring."""

    structures: tuple[Design, ...]
    options: Mapping[int, tuple[GroupChoice, ...]]
    library: SkillLibrary
    key: Callable[[Design], str]
    shapes: Mapping[int, Mapping[str, int]] = field(default_factory=dict)

    @classmethod
    def of_plan(cls, plan: Any, library: Any = None) -> DecisionSpace:
        """The decisions of a ``DesignPlan``: its ranked designs and each group's options;
        parameter moves come from ``library`` (the plan's, or one restricted by constraints)."""
        options = {g.group.id: tuple(o.choice for o in g.options) for g in plan.groups}
        lib = plan.library if library is None else library
        return cls(tuple(plan.designs), options, lib, plan.canonical_key,
                   plan.constraint_names())

    def priors(self) -> list[float]:
        """The policy prior over :attr:`structures`: proportional to 1 / rank (the ranking's
        order, with no claim about how much better the first is), summing to 1."""
        raw = [1.0 / (i + 1) for i in range(len(self.structures))]
        total = sum(raw) or 1.0
        return [r / total for r in raw]

    def parameter_moves(self, design: Design) -> list[Move]:
        """The designs one tuned parameter away from ``design`` (neighbouring values)."""
        moves: list[Move] = []
        # one group's space at a time: a skill's constraints name only its own group's
        # parameters, and a many-kernel model's joint space is too large to enumerate
        for group in dict.fromkeys(c.group for c in design.choices):
            try:
                space = DesignSpace.of(design, self.library, {group}, self.shapes)
            except ConfigError:  # a skill whose parameters make no space: no moves for it
                continue
            config = space.config(design) or {}
            for param, (idx, pname, sname) in zip(space.space.params, space.names, strict=True):
                values = sorted(int(v) for v in param.values)
                current = config.get(sname)
                if current is None or current not in values:
                    continue
                at = values.index(current)
                for j in (at - 1, at + 1):
                    if not 0 <= j < len(values):
                        continue
                    if space.space.index({**config, sname: values[j]}) is None:
                        continue  # breaks one of the skill's constraints
                    choices = list(design.choices)
                    choice = choices[idx]
                    choices[idx] = choice.with_params({**choice.params, pname: values[j]})
                    label = f"g{choice.group}.{pname} {current}->{values[j]}"
                    moves.append((Design(tuple(choices), stage="tuning"), label))
        return moves

    def structure_moves(self, design: Design) -> list[Move]:
        """The designs with one group's choice replaced by another of its options (that
        option's default parameters), and, where the design has several groups, those with one
        matrix product, convolution or attention left to PyTorch (its vendor kernels)."""
        moves: list[Move] = []
        for idx, current in enumerate(design.choices):
            if len(design.choices) > 1 and current.kind in PRODUCT_KINDS:
                rest = design.choices[:idx] + design.choices[idx + 1:]
                label = f"g{current.group} {current.skill} -> PyTorch"
                moves.append((Design(rest, stage="structure"), label))
            for alt in self.options.get(current.group, ()):
                if _structure(alt) == _structure(current):
                    continue
                choices = list(design.choices)
                choices[idx] = alt
                label = f"g{current.group} {current.skill} -> {alt.skill}"
                moves.append((Design(tuple(choices), stage="structure"), label))
        return moves

    def accurate_move(self, design: Design) -> Move | None:
        """:func:`accurate_variant` of ``design``, labelled with the knobs it changed; None
        when every such knob is at its accurate value already."""
        accurate = accurate_variant(design, self.library)
        if accurate is None:
            return None
        changed = [f"g{a.group}.{k} {a.params[k]}->{b.params[k]}"
                   for a, b in zip(design.choices, accurate.choices, strict=True)
                   for k in a.params if a.params[k] != b.params[k]]
        return accurate, f"accurate: {', '.join(changed)}"


def accurate_variant(design: Design, library: SkillLibrary) -> Design | None:
    """``design`` with every knob of its skills that declares an accurate value
    (``Param.accurate``) at that value; None when none is set otherwise (nothing to retry)."""
    choices = []
    changed = False
    for c in design.choices:
        params = dict(c.params)
        for skill_id in (c.skill, *c.options):
            for p in library.get(skill_id).params:
                if p.accurate is not None and p.name in params and params[p.name] != p.accurate:
                    params[p.name] = p.accurate
                    changed = True
        choices.append(c.with_params(params))
    return Design(tuple(choices), design.stage) if changed else None


def _structure(choice: GroupChoice) -> tuple[str, str, tuple[str, ...]]:
    return (choice.skill, choice.variant, choice.options)


def design_of(trial: Trial) -> Design | None:
    """The design a template trial carries; None for a hand-written or LLM candidate."""
    if not trial.candidate.design.get("groups"):
        return None
    try:
        return design_from_json(trial.candidate.design, trial.candidate.params)
    except (KeyError, ValueError, TypeError):
        return None


def reference_cost(history: Sequence[Trial], objective: Objective = Objective.TIME) -> float:
    """The best correct cost of ``history`` under ``objective`` (infinity when none was
    measured)."""
    costs = [candidate_cost(t.verdict, objective) for t in history
             if t.verdict.correct and not t.refused]
    return min(costs, default=math.inf)


def value(verdict: Verdict, reference: float, objective: Objective = Objective.TIME) -> float:
    """What a verdict is worth to the search (see the module docstring)."""
    if not verdict.correct:
        return 0.0
    cost = candidate_cost(verdict, objective)
    eager = eager_cost(verdict, objective)
    ref = eager if math.isfinite(eager) else reference
    if not (math.isfinite(cost) and cost > 0 and math.isfinite(ref) and ref > 0):
        return 0.5  # correct but not measured: as good as the reference, no better
    ratio = ref / cost
    return ratio / (1.0 + ratio)


def render_proposal(
    design: Design,
    render: Callable[[Design], str],
    note: str,
    parent: int | None,
    skipped: list[tuple[str, str]],
) -> Proposal | None:
    """``design`` as a template candidate derived from ``parent``; None (and a line in
    ``skipped``) when the templates cannot render it."""
    try:
        source = render(design)
    except DesignError as exc:
        skipped.append((design.structure_key(), str(exc)))
        return None
    except Exception as exc:  # a template bug must cost this design, not the run
        skipped.append((design.structure_key(), f"{type(exc).__name__}: {exc}"))
        return None
    candidate = Candidate(
        source=source,
        origin="template",
        parent=parent,
        design=design.to_json(),
        params=design.params_json(),
    )
    return Proposal(candidate, note)
