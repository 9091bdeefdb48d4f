"""Words outside the vocabulary, restated by an LLM into it; every restatement is checked.

    formulate_with_llm(text, model) -> Formulation

The vocabulary formulates what it can. Each fragment it did not understand goes to the model,
which answers with restatements in the vocabulary's own phrases, as many alternatives per
fragment as it sees. Nothing the model says is taken on trust:

- each restatement is formulated by the vocabulary; one that is not wholly understood, that
  conflicts in itself or that gives no clause is dropped;
- restatements giving the same clauses are one formulation (restrictions compared by their SymPy
  canonical form, so ``BLOCK % 64 == 0`` and ``0 == BLOCK % 64`` are the same);
- a fragment whose surviving formulations differ stays unrecognised, and the alternatives are
  named, so the person chooses; one with a single formulation adds its clauses.

Each clause keeps the fragment's own words, followed by the restatement it came through.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kernelwright.constraints.clauses import Kind
from kernelwright.constraints.expressions import canonical
from kernelwright.constraints.formulate import Formulation, assemble, builtin_domains, read
from kernelwright.constraints.model import Constraints
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
    left: list[str] = []
    notes: list[str] = []
    for i, fragment in enumerate(unrecognised):
        chosen = _formulations(alternatives.get(i, []), domains)
        if len(chosen) == 1:
            restated, clauses = next(iter(chosen.values()))
            found += [_traced(f, fragment, restated) for f in clauses]
        else:
            left.append(fragment)
            if chosen:
                said = " or ".join(repr(r) for r, _ in chosen.values())
                notes.append(f"ambiguous: {fragment!r} could be {said}")
    model_of = assemble(text, found, left, domains, base)
    return dataclasses.replace(model_of, warnings=model_of.warnings + tuple(notes))


def _formulations(
    restatements: Sequence[str], domains: Mapping[str, Sequence[int]]
) -> dict[frozenset[tuple[str, str]], tuple[str, list[Found]]]:
    """The distinct formulations among ``restatements`` (the first restatement of each kept)."""
    distinct: dict[frozenset[tuple[str, str]], tuple[str, list[Found]]] = {}
    for restated in restatements:
        try:
            found, unrecognised = read(restated, domains)
            checked = assemble(restated, found, unrecognised, domains)
        except ConfigError:
            continue
        if not found or unrecognised or not checked.ok:
            continue
        key = frozenset(_meaning(f) for f in found)
        distinct.setdefault(key, (restated, found))
    return distinct


def _meaning(found: Found) -> tuple[str, str]:
    """What a clause says, independent of how it was spelt."""
    clause = found.clause
    if clause.kind is Kind.RESTRICTION and found.restriction is not None:
        derived = dict([found.derived]) if found.derived else None
        return clause.kind.value, canonical(found.restriction, derived)
    return clause.kind.value, clause.formal


def _traced(found: Found, fragment: str, restated: str) -> Found:
    words = f"{fragment} (restated: {restated})"
    return dataclasses.replace(found, clause=dataclasses.replace(found.clause, words=words))
