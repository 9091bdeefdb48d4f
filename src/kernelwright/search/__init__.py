"""Search: proposers suggest candidates from the archive's history; the controller judges them.

Proposer.ask(task, history, n) -> proposals      (templates, MCTS, evolution, BO, LLM agents)
controller.run_search(...)                       ask -> de-duplicate -> evaluate -> archive -> tell
"""

from kernelwright.search.controller import Budget, SearchResult, run_search
from kernelwright.search.proposer import Proposal, Proposer, Trial

__all__ = ["Budget", "Proposal", "Proposer", "SearchResult", "Trial", "run_search"]
