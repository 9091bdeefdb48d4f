"""The template proposer: expert skills without an LLM, in the two stages of EGG.

    stage 1  structure: the ranked designs (skill and variant per fusion group), best first,
             each with the skills' default parameters for the task's shapes
    stage 2  tuning: the best correct structure's parameters, searched by the tuning stage's
             Bayesian optimisation when available, else by ranked enumeration

It implements the Proposer protocol and keeps no state the history cannot rebuild: which designs
were tried is read back from each trial's ``Candidate.design``/``params``, so a resumed run picks
up where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kernelwright.design.choices import Design, design_from_json
from kernelwright.design.kernel.common import DesignError
from kernelwright.records import Candidate, Task
from kernelwright.search.proposer import Proposal, Trial
from kernelwright.search.strategies.params import ParamSearch, Tried, params_key


@dataclass
class TemplateProposer:
    """See the module docstring.

    Attributes:
        designs: stage-1 designs, most promising first.
        render: turns a design into ModelNew source (raises DesignError when it cannot).
        search: the stage-2 parameter search.
        structures: how many stage-1 designs to evaluate before tuning.
        skipped: designs the templates could not render, with the reason.
    """

    designs: list[Design]
    render: Callable[[Design], str]
    search: ParamSearch
    structures: int = 4
    name: str = "templates"
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def ask(self, task: Task, history: Sequence[Trial], n: int) -> list[Proposal]:
        tried = _tried(history)
        seen = {params_key(d) for d, _ in tried}
        structure_trials = [d for d, _ in tried if d.stage == "structure"]
        proposals: list[Proposal] = []
        best = _best(history)
        if len(structure_trials) < self.structures or best is None:
            for i, d in enumerate(self.designs):
                if params_key(d) in seen:
                    continue
                p = self._proposal(d, f"structure {i + 1}/{len(self.designs)}: {_summary(d)}")
                if p is not None:
                    proposals.append(p)
                    seen.add(params_key(d))
                if len(proposals) >= n:
                    return proposals
            if proposals or best is None:
                return proposals
        assert best is not None
        for d in self.search.suggest(best, tried, n * 3):
            if params_key(d) in seen:
                continue
            p = self._proposal(d, f"tuning ({self.search.name}): {_params_summary(d, best)}")
            if p is not None:
                proposals.append(p)
                seen.add(params_key(d))
            if len(proposals) >= n:
                break
        return proposals

    def tell(self, trials: Sequence[Trial]) -> None:
        """Nothing to keep: the next ``ask`` reads the history."""

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


def _tried(history: Sequence[Trial]) -> list[Tried]:
    out: list[Tried] = []
    for t in history:
        if t.candidate.origin != "template" or not t.candidate.design.get("groups"):
            continue
        d = design_from_json(t.candidate.design, t.candidate.params)
        timing = t.verdict.timing.candidate
        out.append((d, timing.median_ms if t.verdict.correct and timing is not None else None))
    return out


def _best(history: Sequence[Trial]) -> Design | None:
    best: tuple[float, Design] | None = None
    for t in history:
        if (
            t.candidate.origin != "template"
            or not t.verdict.correct
            or not t.candidate.design.get("groups")
        ):
            continue
        timing = t.verdict.timing.candidate
        ms = timing.median_ms if timing is not None else float("inf")
        if best is None or ms < best[0]:
            best = (ms, design_from_json(t.candidate.design, t.candidate.params))
    return best[1] if best else None


def _summary(d: Design) -> str:
    parts = []
    for c in d.choices:
        opts = f" + {', '.join(c.options)}" if c.options else ""
        parts.append(f"g{c.group} {c.skill}{opts}")
    return "; ".join(parts)


def _params_summary(d: Design, base: Design) -> str:
    changed = [f"{k}={v}" for k, v in d.params_json().items() if base.params_json().get(k) != v]
    return ", ".join(changed) or "same parameters"
