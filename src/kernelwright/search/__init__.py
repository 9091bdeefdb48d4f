"""Search: proposers suggest candidates from the archive's history; the controller judges them.

Proposer.ask(task, history, n, seed) -> proposals    (templates, LLM agents)
controller.run_search(...)     ask -> de-duplicate -> screen (constraints) -> evaluate -> archive
templates.TemplateProposer     skills and templates: structures, then a tuning strategy over
                               the best structure's parameters (``search.tunable``)
"""

from kernelwright.search.controller import Budget, SearchResult, run_search
from kernelwright.search.proposer import (
    Proposal,
    Proposer,
    Suggester,
    Trial,
    candidate_ms,
    fastest_correct,
)

__all__ = [
    "Budget",
    "Proposal",
    "Proposer",
    "SearchResult",
    "Suggester",
    "Trial",
    "candidate_ms",
    "fastest_correct",
    "run_search",
]
