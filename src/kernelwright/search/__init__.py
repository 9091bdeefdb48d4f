"""Search: proposers suggest candidates from the archive's history; the controller judges them.

Proposer.ask(task, history, n, seed) -> proposals    (templates, LLM agents)
controller.run_search(...)     ask -> prune equivalents -> screen -> evaluate -> archive
templates.TemplateProposer     skills and templates: structures, then a tuning strategy over
                               the best structure's parameters (``search.tunable``)
mcts.MCTSProposer              PUCT over a tree of design decisions (``search.decisions``)
evolution.EvolutionProposer    a population of designs: one-decision mutations, crossover
lineage.lineage                a run's candidates with their parents (its tree or lineage)
"""

from kernelwright.search.controller import Budget, SearchResult, run_search
from kernelwright.search.proposer import (
    Proposal,
    Proposer,
    Suggester,
    Trial,
    best_correct,
    candidate_ms,
)

__all__ = [
    "Budget",
    "Proposal",
    "Proposer",
    "SearchResult",
    "Suggester",
    "Trial",
    "candidate_ms",
    "best_correct",
    "run_search",
]
