"""An evolutionary search over designs: a population, one-decision mutations, per-group crossover.

    seed population   the ranked structures (``DecisionSpace.structures``) until ``population``
                      of them are judged
    survivors         the ``population`` fittest designs judged so far (truncation; fitness is
                      ``decisions.value``: 0 when incorrect); once every offspring they can
                      have was tried, the whole population
    parents           tournaments of ``tournament`` survivors: the fitter wins
    crossover         with probability ``crossover``, when two survivors of the same groups differ
                      in more than one: each group's choice (structure and parameters) from
                      either parent, some from each
    mutation          otherwise: one decision changed, a tuned parameter to a neighbouring
                      value or one group's structure to another of its options
    repair            before anything else, each design the harness found incorrect once more
                      with its knobs that trade accuracy for speed at their accurate values
                      (``DecisionSpace.accurate_move``): a default that costs accuracy costs
                      one evaluation, not the design (its fitness 0 would end its line); the
                      repair is the parent from then on, not the incorrect design, whose
                      offspring would keep the knobs that failed

Offspring name their first parent (``Candidate.parent``), so the archive holds the lineage.
Nothing is kept between asks: the population is the history, and the random draws depend on
the seed and the history's length only, so a resumed run proposes what the uninterrupted run
would have.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kernelwright.design.choices import Design
from kernelwright.hardware.energy import Objective
from kernelwright.records import Status, Task
from kernelwright.search.decisions import (
    DecisionSpace,
    Move,
    design_of,
    reference_cost,
    render_proposal,
    value,
)
from kernelwright.search.proposer import Proposal, Trial

# Offspring drawn per proposal asked before giving up (most repeat a tried design late in a run).
ATTEMPTS_PER_PROPOSAL = 30


@dataclass(frozen=True, slots=True)
class Member:
    """A judged design and its fitness."""

    design: Design
    candidate_id: int
    fitness: float
    incorrect: bool = False  # the harness judged it and its outputs were wrong


@dataclass
class EvolutionProposer:
    """See the module docstring.

    Attributes:
        space: the decisions (ranked structures, each group's options, parameter moves).
        render: turns a design into ModelNew source (raises DesignError when it cannot).
        population: designs kept as parents (and the size of the seed population).
        tournament: survivors drawn per tournament.
        crossover: probability of crossing two parents instead of mutating one.
        skipped: designs the templates could not render, with the reason.
    """

    space: DecisionSpace
    render: Callable[[Design], str]
    population: int = 4
    tournament: int = 2
    crossover: float = 0.5
    objective: Objective = Objective.TIME
    name: str = "evolution"
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def ask(self, task: Task, history: Sequence[Trial], n: int, seed: int) -> list[Proposal]:
        """Repairs of incorrect designs first, then seed structures, then up to ``n``
        offspring of the survivors."""
        members, known = self._population(history)
        proposals: list[Proposal] = []

        def propose(design: Design, note: str, parent: int | None) -> None:
            """``design`` as the next proposal, unless it or an equivalent was tried."""
            if self.space.key(design) in known:
                return
            known.add(self.space.key(design))
            p = render_proposal(design, self.render, f"evolution: {note}", parent, self.skipped)
            if p is not None:
                proposals.append(p)

        for m in members:
            move = self.space.accurate_move(m.design) if m.incorrect else None
            if move is not None and len(proposals) < n:
                propose(move[0], f"{move[1]} (from #{m.candidate_id})", m.candidate_id)
        if len(proposals) >= n:
            return proposals
        if len(members) < self.population:
            for i, d in enumerate(self.space.structures):
                if len(proposals) >= n:
                    break
                propose(d, f"seed {i + 1}/{len(self.space.structures)}", None)
            if proposals or not members:
                return proposals
        parents = [m for m in members
                   if not (m.incorrect and self.space.accurate_move(m.design) is not None)]
        ranked = sorted(parents, key=lambda m: -m.fitness)
        if not ranked:
            return proposals
        rng = random.Random(f"{seed}:{len(history)}")
        # the survivors; when every offspring they can have was tried, the whole population
        for pool in (ranked[: self.population], ranked):
            for _ in range(n * ATTEMPTS_PER_PROPOSAL):
                if len(proposals) >= n:
                    return proposals
                parent = self._tournament(pool, rng)
                child = self._offspring(parent, pool, rng)
                if child is not None:
                    propose(child[0], f"{child[1]} (from #{parent.candidate_id})",
                            parent.candidate_id)
            if proposals:
                break
        return proposals

    def _population(self, history: Sequence[Trial]) -> tuple[list[Member], set[str]]:
        """The judged designs of ``history`` with their fitness, and every design key tried."""
        reference = reference_cost(history, self.objective)
        members: list[Member] = []
        known: set[str] = set()
        for t in history:
            design = design_of(t)
            if design is None:
                continue
            key = self.space.key(design)
            if key not in known and not t.refused:  # an equivalent is the same member
                fitness = value(t.verdict, reference, self.objective)
                incorrect = t.verdict.status == Status.INCORRECT
                members.append(Member(design, t.candidate_id, fitness, incorrect))
            known.add(key)
        return members, known

    def _tournament(self, survivors: Sequence[Member], rng: random.Random) -> Member:
        drawn = [survivors[rng.randrange(len(survivors))] for _ in range(self.tournament)]
        return max(drawn, key=lambda m: m.fitness)

    def _offspring(
        self, parent: Member, survivors: Sequence[Member], rng: random.Random
    ) -> Move | None:
        """A crossover with another survivor, or a one-decision mutation of ``parent``."""
        mates = [m for m in survivors if len(_differing_groups(parent.design, m.design)) > 1]
        if mates and rng.random() < self.crossover:
            mate = self._tournament(mates, rng)
            differing = _differing_groups(parent.design, mate.design)
            # from the mate: a proper, non-empty part of the groups where the parents differ,
            # so the child is neither parent
            taken = set(rng.sample(differing, rng.randint(1, len(differing) - 1)))
            choices = tuple(
                b if i in taken else a
                for i, (a, b) in enumerate(
                    zip(parent.design.choices, mate.design.choices, strict=True)
                )
            )
            return Design(choices, stage="crossover"), f"crossover with #{mate.candidate_id}"
        moves = self.space.parameter_moves(parent.design) + self.space.structure_moves(
            parent.design
        )
        return rng.choice(moves) if moves else None


def _differing_groups(a: Design, b: Design) -> list[int]:
    """Indices of the choices where two designs of the same groups differ (empty when their
    groups are not the same)."""
    if [c.group for c in a.choices] != [c.group for c in b.choices]:
        return []
    return [i for i, (x, y) in enumerate(zip(a.choices, b.choices, strict=True)) if x != y]
