"""The template proposer: expert skills without an LLM, in the two stages of EGG.

    stage 1  structure: the ranked designs (skill and variant per fusion group), best first,
             each with the skills' default parameters for the task's shapes
    stage 2  tuning: the best correct structure's parameters, as a tuning ``Space``
             (``search.tunable``) searched by a tuning strategy (``kernelwright.tuning``:
             ``neighbours-then-bo`` by default, ``neighbours`` when SciPy is missing)

A structure the harness finds incorrect is proposed once more, before the next structure, with
its knobs that trade accuracy for speed at their accurate values (``Param.accurate``: IEEE fp32
products for 3xTF32 ones, fp32-accurate attention scores for TF32 ones), where it has such
knobs set otherwise: a default that trades accuracy costs one evaluation on a task where the
harness refuses it, not the design.

A best structure whose calls are host-bound (its verdict's ``host-bound`` label: the device
waited for the host's launches) is not tuned: its kernels' parameters cannot shorten a call the
host takes. The remaining structures are tried instead (another may launch less), then the
search stops and says why.

It implements the Proposer protocol and keeps no state the history cannot rebuild: which designs
were tried is read back from each trial's ``Candidate.design``/``params``, so a resumed run picks
up where it stopped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kernelwright.design.choices import Design, design_from_json
from kernelwright.design.kernel.common import DesignError
from kernelwright.errors import ConfigError
from kernelwright.hardware.energy import Objective
from kernelwright.records import Candidate, Status, Task
from kernelwright.search.decisions import accurate_variant
from kernelwright.search.proposer import Proposal, Trial, best_correct, candidate_cost
from kernelwright.search.tunable import DesignSpace, Prior, Tried, focus_groups, params_key
from kernelwright.skills.library import SkillLibrary
from kernelwright.tuning.strategies.base import Strategy


@dataclass
class TemplateProposer:
    """See the module docstring.

    Attributes:
        designs: stage-1 designs, most promising first.
        render: turns a design into ModelNew source (raises DesignError when it cannot).
        library: the skills, whose ``tune = true`` parameters stage 2 searches.
        tuning: the stage-2 strategy.
        prior: the archive's measurements of a design's skills on other tasks (warm start).
        structures: how many stage-1 designs to evaluate before tuning (refused ones excluded).
        weights: each group's estimated share of the run time (``DesignPlan.group_weights``):
            when a design's joint space is too large to tune at once, the heaviest groups are
            tuned (``search.tunable.focus_groups``).
        shapes: each group's quantities the skills' constraints may name
            (``DesignPlan.constraint_names``).
        skipped: designs the templates could not render, with the reason.
        stop_reason: why the proposer ran out of proposals (read by the search controller).
    """

    designs: list[Design]
    render: Callable[[Design], str]
    library: SkillLibrary
    tuning: Strategy
    prior: Prior | None = None
    structures: int = 4
    weights: Mapping[int, float] = field(default_factory=dict)
    shapes: Mapping[int, Mapping[str, int]] = field(default_factory=dict)
    objective: Objective = Objective.TIME
    name: str = "templates"
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stop_reason: str | None = None

    def ask(self, task: Task, history: Sequence[Trial], n: int, seed: int) -> list[Proposal]:
        """Untried structures first, then tuning suggestions around the best correct one."""
        ours = [t for t in history if _is_template(t)]
        tried = _tried(ours, self.objective)
        seen = {params_key(d) for d, _ in tried}
        evaluated = [t for t in ours if not t.refused]
        structure_trials = [t for t in evaluated if t.candidate.design.get("stage") == "structure"]
        proposals: list[Proposal] = []
        best_trial = best_correct(ours, self.objective)
        best = _design(best_trial) if best_trial is not None else None
        host_bound = best_trial is not None and host_bound_trial(best_trial)
        if len(structure_trials) < self.structures or best is None or host_bound:
            retries = [(d, f"structure again, accurate: {_params_summary(d, _design(t))}")
                       for t in structure_trials if t.verdict.status == Status.INCORRECT
                       for d in [accurate_variant(_design(t), self.library)] if d is not None]
            untried = [(d, f"structure {i + 1}/{len(self.designs)}: {_summary(d)}")
                       for i, d in enumerate(self.designs)]
            for d, note in [*retries, *untried]:
                if params_key(d) in seen:
                    continue
                p = self._proposal(d, note)
                if p is not None:
                    proposals.append(p)
                    seen.add(params_key(d))
                if len(proposals) >= n:
                    return proposals
            if proposals or best is None:
                return proposals
            if host_bound:
                self.stop_reason = ("the best candidate is host-bound (the device waits for its "
                                    "launches): tuning its kernels' parameters cannot shorten "
                                    "its calls, and every structure was tried")
                return []
        assert best is not None
        designs, model = self._tune(best, tried, n * 3, seed)
        for d in designs:
            if params_key(d) in seen:
                continue
            p = self._proposal(d, f"tuning ({self.tuning.name}{model}): {_params_summary(d, best)}")
            if p is not None:
                proposals.append(p)
                seen.add(params_key(d))
            if len(proposals) >= n:
                break
        return proposals

    def _tune(
        self, base: Design, tried: Sequence[Tried], n: int, seed: int
    ) -> tuple[list[Design], str]:
        """The tuning strategy's next ``n`` for ``base``'s structure, and the GP kernel it chose
        (``", GP kernel ..."``; empty for strategies that do not choose one)."""
        focus = focus_groups(base, self.library, self.weights, tried=tried)
        try:  # a skill whose parameters make no space costs its tuning, not the run
            space = DesignSpace.of(base, self.library, focus, self.shapes)
        except ConfigError as exc:
            self.skipped.append((base.structure_key(), f"tuning: {exc}"))
            return [], ""
        if not space.names:
            return [], ""
        try:
            history = space.observations(tried, self.prior)
            rows = self.tuning.ask(space.space, history, n, seed)
        except ConfigError as exc:  # a space the strategy cannot enumerate: no tuning
            self.skipped.append((base.structure_key(), f"tuning: {exc}"))
            return [], ""
        choose = getattr(self.tuning, "kernel_choice", None)
        choice = choose(space.space, history) if choose is not None else None
        model = f", GP kernel {choice.label}" if choice is not None else ""
        return [space.design(row) for row in rows], model

    def _proposal(self, design: Design, note: str) -> Proposal | None:
        try:
            source = self.render(design)
        except DesignError as exc:
            self.skipped.append((design.structure_key(), str(exc)))
            return None
        except Exception as exc:  # a template bug must cost this design, not the run
            self.skipped.append((design.structure_key(), f"{type(exc).__name__}: {exc}"))
            return None
        candidate = Candidate(
            source=source,
            origin="template",
            design=design.to_json(),
            params=design.params_json(),
        )
        return Proposal(candidate, note)


def host_bound_trial(t: Trial) -> bool:
    """The trial's verdict says its calls are host-bound (``evaluate.verdict.host_bound_label``)."""
    return any(label.startswith("host-bound") for label in t.verdict.labels)


def _is_template(t: Trial) -> bool:
    return t.candidate.origin == "template" and bool(t.candidate.design.get("groups"))


def _design(t: Trial) -> Design:
    return design_from_json(t.candidate.design, t.candidate.params)


def _tried(history: Sequence[Trial], objective: Objective = Objective.TIME) -> list[Tried]:
    """Each design with what the tuner minimises (the objective's cost; None: not measured)."""
    out: list[Tried] = []
    for t in history:
        cost = candidate_cost(t.verdict, objective)
        out.append((_design(t), cost if t.verdict.correct and math.isfinite(cost) else None))
    return out


def _summary(d: Design) -> str:
    parts = []
    for c in d.choices:
        opts = f" + {', '.join(c.options)}" if c.options else ""
        parts.append(f"g{c.group} {c.skill}{opts}")
    return "; ".join(parts)


def _params_summary(d: Design, base: Design) -> str:
    changed = [f"{k}={v}" for k, v in d.params_json().items() if base.params_json().get(k) != v]
    return ", ".join(changed) or "same parameters"
