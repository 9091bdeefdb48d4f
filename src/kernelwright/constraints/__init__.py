"""Constraints a person puts on candidates, enforced by ``kernelwright optimize`` for every
proposer (templates and LLM agents) and by the harness; see :mod:`.model` for the clauses.

    load_constraints("constraints.toml") -> Constraints
    formulate("don't use atomics; tiles multiples of 64") -> Formulation (the model, checked)
    review(constraints)                  -> the same check for a file's model
    to_toml(constraints, clauses)        -> the file, each clause under the words it came from
    Constraints.violations(source, params) -> the clauses a candidate breaks
    Constraints.apply(eval_options)      -> options that enforce them (the precision must agree)
    Constraints.restrict(library)        -> skills whose tuning spaces obey the restrictions
    Constraints.limit(budget)            -> the budget capped by the file's [budget]

Modules: ``model`` (the clauses), ``loader`` / ``writer`` (the file), ``source_rules`` and
``constructs`` (source checks), ``space_rules`` (parameter restrictions), ``expressions`` (their
SymPy formulas), ``solver`` (conflicts, redundancy), ``properties`` (determinism, shapes, memory,
dtypes), ``vocabulary`` and ``formulate`` (words -> clauses), ``clauses`` (how each is shown).
"""

from kernelwright.constraints.formulate import Formulation, formulate, review
from kernelwright.constraints.loader import load_constraints
from kernelwright.constraints.model import Constraints, Reference
from kernelwright.constraints.writer import to_toml

__all__ = [
    "Constraints",
    "Formulation",
    "Reference",
    "formulate",
    "load_constraints",
    "review",
    "to_toml",
]
