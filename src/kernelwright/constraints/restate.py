"""Words outside the vocabulary, restated by an LLM into it; every restatement is checked.

    formulate_with_llm(text, model) -> Formulation

The vocabulary formulates what it can. Each fragment it did not understand goes to the model,
which answers with restatements in the vocabulary's own phrases, as many alternatives per
fragment as it sees. Nothing the model says is taken on trust:

- each restatement is formulated by the vocabulary; one that is not wholly understood, that
  conflicts in itself or that gives no clause is dropped;
- restatements meaning the same are one reading: restrictions admitting the same
  configurations of the parameters' domains (the solver enumerates them), so
  ``BLOCK % 64 == 0`` and ``0 == BLOCK % 64`` are one reading, and over 16, 32, 64, 128 so are
  ``BLOCK >= 64`` and ``BLOCK > 32``;
- the readings of all fragments are searched together (``constraints.search``: MCTS over one
  reading per fragment, formulations that mean the same pruned as one node): the model kept
  is free of conflicts, formulates as much as it can and follows the model's order; a fragment
  read several ways says which reading was taken and which were not, so the person can take
  another before accepting, and a fragment no reading fits stays unrecognised.

Each clause keeps the fragment's own words, followed by the restatement it came through.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kernelwright.constraints.formulate import Formulation, assemble, builtin_domains, read
from kernelwright.constraints.model import Constraints
from kernelwright.constraints.search import Reading, meaning_key, search
from kernelwright.constraints.vocabulary import VOCABULARY, Found
from kernelwright.errors import ConfigError

if TYPE_CHECKING:
    from kernelwright.agents.llm import ChatModel

_LINE = re.compile(r"^\s*(\d+)\s*[:.)]\s*(.+?)\s*$")

SYSTEM = """You restate requirements on GPU kernels in a controlled vocabulary.
Each phrase below is understood exactly as written (numbers and names may change):
{phrases}
Restriction expressions over kernel parameters are understood too (Python syntax: + - * / // %,
comparisons, and/or/not, min/max/abs), with these parameters: {names}.
For each numbered requirement, answer one line per restatement, `N: <restatement>`, giving
several lines for a requirement that can be read several ways. Write nothing else. Leave out a
requirement that no phrase can express."""


def formulate_with_llm(
    text: str,
    model: ChatModel,
    domains: Mapping[str, Sequence[int]] | None = None,
    base: Constraints | None = None,
) -> Formulation:
    """Formulate ``text``, asking ``model`` to restate the fragments the vocabulary did not
    understand (see the module docstring). With nothing unrecognised, no call is made.

    Raises:
        ConfigError: empty text, or a phrase that cannot become a clause.
        LLMError: the model's call failed.
    """
    from kernelwright.agents.llm import ChatMessage

    domains = builtin_domains() if domains is None else domains
    found, unrecognised = read(text, domains)
    if not unrecognised:
        return assemble(text, found, unrecognised, domains, base)
    system = SYSTEM.format(
        phrases="\n".join(f'- "{p.example}"' for p in VOCABULARY), names=", ".join(domains)
    )
    asked = "\n".join(f"{i}: {fragment}" for i, fragment in enumerate(unrecognised, 1))
    reply = model.complete([ChatMessage("system", system), ChatMessage("user", asked)])
    alternatives: dict[int, list[str]] = {}
    for line in reply.text.splitlines():
        m = _LINE.match(line)
        if m and 1 <= int(m.group(1)) <= len(unrecognised):
            alternatives.setdefault(int(m.group(1)) - 1, []).append(m.group(2).strip("`\"' "))
    readings = [
        [Reading(fragment, restated, tuple(_traced(f, fragment, restated) for f in clauses), rank)
         for rank, (restated, clauses) in enumerate(
             _formulations(alternatives.get(i, []), domains).values())]
        for i, fragment in enumerate(unrecognised)
    ]
    searched = search(text, found, _with_fragments(readings, unrecognised), domains, base)
    return searched.formulation


def _with_fragments(readings: list[list[Reading]], fragments: Sequence[str]) -> list[list[Reading]]:
    """Each fragment's readings; a fragment with none gets a placeholder the search can only
    leave (its fragment text is what the person sees)."""
    return [r if r else [Reading(f, None, (), 0)] for r, f in zip(readings, fragments, strict=True)]


def _formulations(
    restatements: Sequence[str], domains: Mapping[str, Sequence[int]]
) -> dict[str, tuple[str, list[Found]]]:
    """The distinct formulations among ``restatements`` (the first restatement of each kept),
    distinct by meaning: restrictions admitting the same configurations are one."""
    distinct: dict[str, tuple[str, list[Found]]] = {}
    for restated in restatements:
        try:
            found, unrecognised = read(restated, domains)
            checked = assemble(restated, found, unrecognised, domains)
        except ConfigError:
            continue
        if not found or unrecognised or not checked.ok:
            continue
        distinct.setdefault(meaning_key(found, domains), (restated, found))
    return distinct


def _traced(found: Found, fragment: str, restated: str) -> Found:
    words = f"{fragment} (restated: {restated})"
    return dataclasses.replace(found, clause=dataclasses.replace(found.clause, words=words))
