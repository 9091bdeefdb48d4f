"""Constraints a person puts on candidates, enforced by ``kernelwright optimize`` for every
proposer (templates and LLM agents) and by the harness; see :mod:`.model` for the clauses.

    load_constraints("constraints.toml") -> Constraints
    Constraints.violations(source)       -> the clauses a source breaks (EvalOptions.constraints)
    Constraints.apply(eval_options)      -> options that enforce them (the precision must agree)
    Constraints.limit(budget)            -> the budget capped by the file's [budget]
"""

from kernelwright.constraints.loader import load_constraints
from kernelwright.constraints.model import Constraints, Reference

__all__ = ["Constraints", "Reference", "load_constraints"]
