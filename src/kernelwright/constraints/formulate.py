"""Requirements in words -> a checked formal model (the controlled vocabulary; no LLM).

    formulate("bf16 storage, fp32 math. Don't use atomics. Tiles multiples of 64.")
        -> Formulation (``review(constraints)``: the same for a constraints file)
             clauses        each with its kind, formal text, how it is checked, its words
             unrecognised   sentence fragments no phrase matched (reported, never dropped)
             conflicts      clauses that cannot all hold (the model is then not usable)
             warnings       clauses implied by others, equivalent, unchecked, or ruling
                            out kernels (the model stays usable)
             constraints    the model as :class:`Constraints` (when there is no conflict)

Sentences end at ``.``, ``;``, ``!``, ``?`` followed by a space, or at a line break, so dotted
names (``torch.matmul``) and decimals (``1.5 GB``) stay whole. Within a sentence each phrase of
:data:`.vocabulary.VOCABULARY` takes its words out in turn; what is left, split at commas and
conjunctions, is unrecognised when it holds a word that is not filler.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kernelwright.constraints.clauses import Clause, clauses_of
from kernelwright.constraints.model import Constraints
from kernelwright.constraints.properties import DtypePolicy, Properties, ShapeRange
from kernelwright.constraints.solver import Analysis, analyse
from kernelwright.constraints.source_rules import BACKENDS
from kernelwright.constraints.space_rules import SpaceRules
from kernelwright.constraints.vocabulary import TILE_NAME, VOCABULARY, Found
from kernelwright.errors import ConfigError

_SENTENCE_END = re.compile(r"[.;!?](?=\s|$)|\n")
_FRAGMENT = re.compile(r",|\b(?:and|but|also|or|plus|while)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][\w'-]*|\d+")
_FILLER = frozenset(
    {
        "a", "all", "also", "always", "an", "any", "are", "be", "candidates", "code", "every",
        "for", "from", "i", "in", "is", "it", "its", "kernel", "kernels", "keep", "make", "must",
        "need", "needs", "of", "only", "our", "output", "outputs", "please", "result", "results",
        "run", "runs", "same", "should", "so", "that", "the", "then", "this", "to", "use", "we",
        "want", "with", "work", "works",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Formulation:
    """A formal model of requirements stated in words (see the module docstring)."""

    text: str
    clauses: tuple[Clause, ...]
    unrecognised: tuple[str, ...]
    conflicts: tuple[str, ...]
    warnings: tuple[str, ...]
    analysis: Analysis = field(default_factory=Analysis)
    constraints: Constraints | None = None

    @property
    def ok(self) -> bool:
        """Usable: no conflict (unrecognised words are reported; the caller decides)."""
        return not self.conflicts and self.constraints is not None


def formulate(
    text: str,
    domains: Mapping[str, Sequence[int]] | None = None,
    base: Constraints | None = None,
) -> Formulation:
    """Turn requirement sentences into a checked formal model.

    Args:
        text: requirements in words.
        domains: parameter name -> its finite values; the built-in skill library's when None.
        base: constraints the words add to (budget, references, signatures...).

    Raises:
        ConfigError: empty text, or a phrase that cannot become a clause (tiles with no tile
            parameters known).
    """
    domains = builtin_domains() if domains is None else domains
    found, unrecognised = read(text, domains)
    return assemble(text, found, unrecognised, domains, base)


def read(text: str, domains: Mapping[str, Sequence[int]]) -> tuple[list[Found], list[str]]:
    """The phrases found in ``text`` and the fragments no phrase understood (see the module
    docstring); :func:`assemble` turns them into a model.

    Raises:
        ConfigError: empty text, or a phrase that cannot become a clause.
    """
    if not text.strip():
        raise ConfigError('no requirements given: state them in words, e.g. "don\'t use atomics"')
    tiles = tuple(sorted(name for name in domains if TILE_NAME.match(name)))
    found: list[Found] = []
    unrecognised: list[str] = []
    for sentence in _sentences(text):
        matched, left = _match(sentence, tiles)
        found += matched
        unrecognised += _leftovers(left) if matched else [sentence]
    return found, unrecognised


def review(
    constraints: Constraints, domains: Mapping[str, Sequence[int]] | None = None
) -> Formulation:
    """The model of an existing constraints file, its clauses attributed to the file, checked
    like a formulation (conflicts and redundancy among its space restrictions)."""
    domains = builtin_domains() if domains is None else domains
    analysis = analyse(constraints.space, domains)
    lines = analysis.lines()
    conflicts = tuple(line for line in lines if line.startswith("conflict"))
    warnings = tuple(line for line in lines if not line.startswith("conflict"))
    return Formulation(
        constraints.path,
        tuple(clauses_of(constraints)),
        (),
        conflicts,
        warnings,
        analysis,
        None if conflicts else constraints,
    )


def builtin_domains() -> dict[str, tuple[int, ...]]:
    """Each parameter of the built-in skill library with its values."""
    from kernelwright.constraints.space_rules import library_domains
    from kernelwright.skills.library import SkillLibrary

    return library_domains(SkillLibrary.builtin())


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _match(sentence: str, tiles: Sequence[str]) -> tuple[list[Found], str]:
    """The phrases found in ``sentence`` (in sentence order) and the words no phrase took."""
    left = sentence
    hits: list[tuple[int, list[Found]]] = []
    for phrase in VOCABULARY:
        for m in phrase.pattern.finditer(left):
            if not m.group(0).strip():
                continue
            hits.append((m.start(), phrase.build(m, tiles)))
        left = phrase.pattern.sub(lambda m: " " * len(m.group(0)), left)
    return [f for _, fs in sorted(hits, key=lambda h: h[0]) for f in fs], left


def _leftovers(left: str) -> list[str]:
    out = []
    for fragment in _FRAGMENT.split(left):
        words = [w for w in _WORD.findall(fragment) if w.lower() not in _FILLER]
        if words:
            out.append(" ".join(fragment.split()))
    return out


def assemble(
    text: str,
    found: Sequence[Found],
    unrecognised: Sequence[str],
    domains: Mapping[str, Sequence[int]],
    base: Constraints | None = None,
) -> Formulation:
    """The checked model of ``found`` clauses added to ``base`` (conflicts, redundancy)."""
    base = base or Constraints()
    found = list(found)
    unrecognised = tuple(unrecognised)
    conflicts: list[str] = []
    warnings: list[str] = []
    backends = _backends(found, conflicts, base)
    dtypes = _dtypes(found, conflicts)
    ceiling = _ceiling(found, warnings)
    restrictions = tuple(dict.fromkeys(f.restriction for f in found if f.restriction))
    derived = dict(base.space.derived)
    derived.update(dict(f.derived for f in found if f.derived))
    space = SpaceRules(
        restrictions=base.space.restrictions + restrictions,
        derived=tuple(derived.items()),
        domains=base.space.domains,
    )
    analysis = analyse(space, domains)
    conflicts += [line for line in analysis.lines() if line.startswith("conflict")]
    warnings += [line for line in analysis.lines() if not line.startswith("conflict")]
    clauses = tuple(f.clause for f in found)
    if conflicts:
        return Formulation(
            text, clauses, unrecognised, tuple(conflicts), tuple(warnings), analysis
        )
    shapes: tuple[ShapeRange, ...] = tuple(dict.fromkeys(f.shape for f in found if f.shape))
    properties = Properties(
        deterministic=base.properties.deterministic or any(f.deterministic for f in found),
        shape_ranges=base.properties.shape_ranges + shapes,
        memory_ceiling_bytes=ceiling or base.properties.memory_ceiling_bytes,
    )
    constraints = Constraints(
        backends=backends,
        precision=dtypes.precision if dtypes else base.precision,
        forbidden_ops=_union(base.forbidden_ops, (f.forbidden_op for f in found)),
        signatures=base.signatures,
        candidates=base.candidates,
        minutes=base.minutes,
        llm_calls=base.llm_calls,
        cost_usd=base.cost_usd,
        references=base.references,
        path=base.path,
        space=space,
        forbidden_constructs=_union(base.forbidden_constructs, (f.construct for f in found)),
        properties=properties,
        dtypes=dtypes or base.dtypes,
    )
    return Formulation(text, clauses, unrecognised, (), tuple(warnings), analysis, constraints)


def _union(first: Sequence[str], more: Iterable[str | None]) -> tuple[str, ...]:
    extra = [m for m in more if m]
    return tuple(dict.fromkeys([*first, *extra]))


def _backends(found: list[Found], conflicts: list[str], base: Constraints) -> tuple[str, ...]:
    allowed = set(base.backends)
    for f in found:
        if f.backends is not None:
            allowed &= set(f.backends)
    if not allowed:
        said = " and ".join(f"{f.clause.words!r}" for f in found if f.backends is not None)
        conflicts.append(f"conflict: {said} leave no kernel language allowed")
    return tuple(b for b in BACKENDS if b in allowed) or base.backends


def _dtypes(found: list[Found], conflicts: list[str]) -> DtypePolicy | None:
    storage = {f.storage: f.clause.words for f in found if f.storage}
    math = {f.math: f.clause.words for f in found if f.math}
    for name, said in (("storage", storage), ("math", math)):
        if len(said) > 1:
            words = " and ".join(repr(w) for w in said.values())
            conflicts.append(f"conflict: {words} state different {name} dtypes")
    if not storage and not math or len(storage) > 1 or len(math) > 1:
        return None
    policy = DtypePolicy(next(iter(storage), "fp32"), next(iter(math), "fp32"))
    try:
        policy.precision  # noqa: B018 - raises for a pair with no policy
    except ConfigError as exc:
        conflicts.append(f"conflict: {exc}")
        return None
    return policy


def _ceiling(found: list[Found], warnings: list[str]) -> int | None:
    ceilings = [f for f in found if f.ceiling is not None]
    if not ceilings:
        return None
    tightest = min(ceilings, key=lambda f: f.ceiling or 0)
    warnings += [
        f"redundant: {f.clause.words!r} (implied by {tightest.clause.words!r})"
        for f in ceilings
        if f is not tightest
    ]
    return tightest.ceiling
