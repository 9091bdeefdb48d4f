"""Proposers that implement the search seam (see :mod:`kernelwright.search.proposer`).

TemplateProposer   expert skills and Triton templates, no LLM: structure, then tuning
"""

from kernelwright.search.strategies.params import (
    NeighbourSearch,
    ParamSearch,
    TunerSearch,
    make_param_search,
)
from kernelwright.search.strategies.templates import TemplateProposer

__all__ = ["NeighbourSearch", "ParamSearch", "TemplateProposer", "TunerSearch", "make_param_search"]
