"""Tuning a free-form candidate through its module-level constants.

A candidate written outside the templates (by an LLM, or by a person) has no design to tune, but
its tile sizes, warp counts and stages are usually module-level constants (``BLOCK_M = 64``).
:class:`ConstantTuner` takes the best correct such candidate of the run and proposes it again
with one power-of-two constant doubled or halved, as a child of it: the templates' one-parameter
moves, applied to source the templates did not write. Its children join the same history, so
the best of them can be tuned further, and an LLM can take any of them up in turn.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from kernelwright.hardware.energy import Objective
from kernelwright.records import Candidate, Task
from kernelwright.search.proposer import Proposal, Trial, best_correct

ORIGIN = "tuner"
TEMPLATE_ORIGIN = "template"  # templates tune their own designs; this tuner leaves them alone


def tunables(source: str) -> dict[str, int | float | str]:
    """Module-level UPPER_CASE constants (``BLOCK_M = 64``): the parameters a tuner can search."""
    found: dict[str, int | float | str] = {}
    for name, node in _constants(source).items():
        if isinstance(node.value, int | float | str):  # _constants admits nothing else
            found[name] = node.value
    return found


def _constants(source: str) -> dict[str, ast.Constant]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    found: dict[str, ast.Constant] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id.isupper()
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, int | float | str)
            and not isinstance(node.value.value, bool)
        ):
            found[node.targets[0].id] = node.value
    return found


def with_constant(source: str, name: str, value: int) -> str:
    """``source`` with the module-level constant ``name`` set to ``value`` (the literal replaced
    where it stands; everything else byte for byte)."""
    node = _constants(source).get(name)
    if node is None or node.end_col_offset is None or node.lineno != node.end_lineno:
        raise KeyError(f"no single-line module-level constant {name!r}")
    lines = source.splitlines(keepends=True)
    line = lines[node.lineno - 1]
    # ast offsets count UTF-8 bytes; constants sit in ASCII lines in practice, but be exact
    raw = line.encode()
    lines[node.lineno - 1] = (
        raw[: node.col_offset] + str(value).encode() + raw[node.end_col_offset:]
    ).decode()
    return "".join(lines)


def moves(source: str) -> list[tuple[str, int]]:
    """Every one-constant move: each positive power-of-two integer constant doubled, then halved
    (never below 1), in the order the constants appear."""
    out: list[tuple[str, int]] = []
    for name, value in tunables(source).items():
        if isinstance(value, int) and value > 0 and value & (value - 1) == 0:
            out.append((name, value * 2))
            if value > 1:
                out.append((name, value // 2))
    return out


@dataclass
class ConstantTuner:
    """A :class:`~kernelwright.search.Proposer`: one-constant moves around the best correct
    candidate that the templates did not write (see the module docstring)."""

    objective: Objective = Objective.TIME
    name: str = ORIGIN

    def ask(self, task: Task, history: Sequence[Trial], n: int, seed: int) -> list[Proposal]:
        """Up to ``n`` untried moves of the best free-form candidate (none: no such candidate,
        or every move tried)."""
        free = [t for t in history if t.candidate.origin != TEMPLATE_ORIGIN and not t.refused]
        base = best_correct(free, self.objective)
        if base is None:
            return []
        tried = {t.candidate.sha256 for t in history}
        source = base.candidate.source
        values = tunables(source)
        out: list[Proposal] = []
        for name, value in moves(source):
            changed = with_constant(source, name, value)
            candidate = Candidate(
                changed,
                ORIGIN,
                parent=base.candidate_id,
                design={"tuned_from": base.candidate_id, "constant": name},
                params={**values, name: value},
            )
            if candidate.sha256 in tried:
                continue
            tried.add(candidate.sha256)
            note = f"constant {name} {values[name]} -> {value} of #{base.candidate_id}"
            out.append(Proposal(candidate, note))
            if len(out) >= n:
                break
        return out
