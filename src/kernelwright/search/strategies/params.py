"""Stage 2 (hardware tuning): parameter search over a fixed structure.

    NeighbourSearch   ranked enumeration: from the best configuration so far, change one
                      parameter at a time, nearest values first (coordinate descent). Needs nothing.
    TunerSearch       the tuning stage's ``Tuner`` (Bayesian optimisation, ask/tell) over the
                      product of the tunable parameters, warm-started with the archive's
                      measurements of the same skills on other shapes, once the structure has
                      ``LOCAL_FIRST`` timings; before that, neighbours of the default (the
                      skill's expert setting). Used when it imports.

Both are pure functions of what was tried, so a resumed run continues where it stopped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kernelwright.design.choices import Design, GroupChoice
from kernelwright.skills.library import SkillLibrary

Tried = tuple[Design, float | None]  # a design and its time (None: failed)

# Timings of a structure (its default included) before Bayesian optimisation proposes: with one
# or two points the surrogate knows nothing near the default and its first asks land far away.
# On the H200 (23 held-out tasks, seventh session) 26 first suggestions of the tuner were 1.9x
# slower than the default in geometric mean, 2 of 26 faster, up to 110x slower (512 values a
# thread); one-parameter moves from the default stay near an expert setting.
LOCAL_FIRST = 3


class ParamSearch(Protocol):
    """Suggests parameter settings for ``base``'s structure."""

    name: str

    def suggest(self, base: Design, tried: Sequence[Tried], n: int) -> list[Design]:
        """Up to ``n`` designs with ``base``'s structure and untried parameters."""
        ...


def tunable(library: SkillLibrary, choice: GroupChoice) -> list[tuple[str, tuple[int, ...]]]:
    """(name, values) of the parameters stage 2 searches for one group (current value included)."""
    skill = library.get(choice.skill)
    found = []
    for p in skill.params:
        if not p.tune:
            continue
        values = set(p.values)
        if p.name in choice.params:
            values.add(int(choice.params[p.name]))
        found.append((p.name, tuple(sorted(values))))
    return found


def params_key(design: Design) -> str:
    """Structure and parameters: identifies a candidate before rendering."""
    return (
        design.structure_key()
        + "#"
        + ",".join(f"{k}={v}" for k, v in sorted(design.params_json().items()))
    )


@dataclass
class NeighbourSearch:
    """Coordinate descent from the best configuration (see the module docstring)."""

    library: SkillLibrary
    name: str = "neighbours"

    def suggest(self, base: Design, tried: Sequence[Tried], n: int) -> list[Design]:
        seen = {params_key(d) for d, _ in tried}
        timed = [
            (t, d) for d, t in tried if t is not None and d.structure_key() == base.structure_key()
        ]
        best = min(timed, key=lambda x: x[0])[1] if timed else base
        out: list[Design] = []
        for idx, choice in enumerate(best.choices):
            skill = self.library.get(choice.skill)
            for name, values in tunable(self.library, choice):
                current = int(choice.params.get(name, values[len(values) // 2]))
                for v in sorted(
                    values,
                    key=lambda x: (
                        abs(math.log2(x) - math.log2(current))
                        if x > 0 and current > 0
                        else abs(x - current),
                        x,
                    ),
                ):
                    if v == current:
                        continue
                    params = {**choice.params, name: v}
                    if not skill.satisfies(params):
                        continue
                    cand = _replace(best, idx, choice.with_params(params))
                    key = params_key(cand)
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append(cand)
                    break  # nearest untried value of this parameter; the next parameter next
                if len(out) >= n:
                    return out
        return out


def _replace(design: Design, idx: int, choice: GroupChoice) -> Design:
    choices = list(design.choices)
    choices[idx] = choice
    return Design(tuple(choices), stage="tuning")


@dataclass
class TunerSearch:
    """Bayesian optimisation through ``kernelwright.tuning.Tuner`` (see the module docstring)."""

    library: SkillLibrary
    strategy: str = "bo"
    prior: Callable[[Design], Sequence[tuple[Mapping[str, int], float, str]]] | None = None
    seed: int = 0
    name: str = "bo"

    def suggest(self, base: Design, tried: Sequence[Tried], n: int) -> list[Design]:
        timed = sum(
            1 for d, t in tried if t is not None and d.structure_key() == base.structure_key()
        )
        if timed < LOCAL_FIRST:
            local = NeighbourSearch(self.library).suggest(base, tried, min(n, LOCAL_FIRST - timed))
            if len(local) >= n:
                return local
            keys = {params_key(d) for d in local}
            rest = [d for d in self._ask(base, tried, n) if params_key(d) not in keys]
            return local + rest[: n - len(local)]
        return self._ask(base, tried, n)

    def _ask(self, base: Design, tried: Sequence[Tried], n: int) -> list[Design]:
        """Bayesian optimisation's next ``n`` (see the class docstring)."""
        from kernelwright.tuning import Kind, Param, Space, Tuner

        names: list[tuple[int, str, str]] = []  # (choice index, param, space name)
        params = []
        restrictions: list[str] = []
        for idx, choice in enumerate(base.choices):
            skill = self.library.get(choice.skill)
            for name, values in tunable(self.library, choice):
                sname = f"g{choice.group}_{name}"
                names.append((idx, name, sname))
                pow2 = all(v > 0 and v & (v - 1) == 0 for v in values)
                kind = Kind.POW2 if pow2 and len(values) > 2 else Kind.INT
                params.append(Param(sname, values, kind, log=not pow2))
            mine = {pname: sname for i, pname, sname in names if i == idx}
            for c in skill.constraints:
                used = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", c))
                if used <= set(mine):
                    restrictions.append(_rename(c, mine))
        if not params:
            return []
        tuner = Tuner(Space(tuple(params), tuple(restrictions)), self.strategy, seed=self.seed)
        by_source: dict[str, list[tuple[Mapping[str, int], float | None]]] = {}
        for config, ms, source in self.prior(base) if self.prior else ():
            by_source.setdefault(source, []).append((config, ms))
        for source, rows in by_source.items():
            tuner.warm_start(rows, source=f"archive:{source}")
        for d, t in tried:
            if d.structure_key() != base.structure_key():
                continue
            config = _config(d, names)
            if tuner.space.index(config) is not None:
                tuner.tell(config, t, failed=t is None)
        out = []
        for cfg in tuner.ask(n):
            choices = list(base.choices)
            for idx, pname, sname in names:
                old = choices[idx]
                choices[idx] = old.with_params({**old.params, pname: int(cfg[sname])})
            out.append(Design(tuple(choices), stage="tuning"))
        return out


def _rename(expr: str, names: Mapping[str, str]) -> str:
    """Replace each parameter name in a constraint by its name in the tuner's space."""
    return re.sub(r"[A-Za-z_][A-Za-z_0-9]*", lambda m: names.get(m.group(0), m.group(0)), expr)


def _config(design: Design, names: Sequence[tuple[int, str, str]]) -> dict[str, int]:
    cfg: dict[str, int] = {}
    for idx, pname, sname in names:
        if idx < len(design.choices) and pname in design.choices[idx].params:
            cfg[sname] = int(design.choices[idx].params[pname])
    return cfg


def make_param_search(
    library: SkillLibrary,
    *,
    prefer: str = "auto",
    prior: Callable[[Design], Sequence[tuple[Mapping[str, int], float, str]]] | None = None,
    seed: int = 0,
) -> ParamSearch:
    """The tuning stage's ``Tuner`` (Bayesian optimisation) when it imports, else enumeration."""
    if prefer == "neighbours":
        return NeighbourSearch(library)
    try:
        from kernelwright.tuning import Tuner  # noqa: F401
        from kernelwright.tuning.strategies import get_strategy

        get_strategy("bo")  # its optional dependencies (scipy) are present
    except Exception:  # the tuning stage is optional: fall back to enumeration
        return NeighbourSearch(library)
    return TunerSearch(library, "bo", prior, seed)
