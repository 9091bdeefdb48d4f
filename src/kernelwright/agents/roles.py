"""Stage-aware roles (EGG) and which one acts next, decided from the run's history alone.

    no LLM trial yet           -> tuner on the best seed if one is correct, else coder
    last LLM trial correct     -> tuner on the best so far                      (stage 2)
    last LLM trial failed      -> debugger on it, up to ``max_repairs`` repairs in a row,
                                  then tuner on the best (or a fresh coder when nothing is correct)

The planner runs once per run, before the first coder turn (stage 1). Nothing here keeps
state: a resumed run reaches the same decision from the archive's history.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from kernelwright.search.proposer import Trial, best_correct, candidate_ms

ORIGIN = "llm"


class AgentRole(enum.StrEnum):
    """Who speaks: each gets its own template and only the context it needs."""

    PLANNER = "planner"
    CODER = "coder"
    DEBUGGER = "debugger"
    TUNER = "tuner"


@dataclass(frozen=True, slots=True)
class Step:
    """The next role and the trial it works on (repairs or improves); None for a fresh coder."""

    role: AgentRole
    subject: Trial | None = None


def repair_depth(trial: Trial, history: Sequence[Trial]) -> int:
    """How many debugger repairs in a row led to ``trial``."""
    by_id = {t.candidate_id: t for t in history}
    depth, current = 0, trial
    seen = {current.candidate_id}
    while current.candidate.design.get("agent") == AgentRole.DEBUGGER.value:
        depth += 1
        parent = by_id.get(current.candidate.parent) if current.candidate.parent else None
        if parent is None or parent.candidate_id in seen:
            break
        seen.add(parent.candidate_id)
        current = parent
    return depth


def next_step(history: Sequence[Trial], *, max_repairs: int = 3) -> Step:
    """Which role acts next, on what (see the module docstring)."""
    best = best_correct(history)
    # a candidate still being judged (a search over several workers) is not repaired yet
    ours = [t for t in history if t.candidate.origin == ORIGIN and not t.pending]
    if not ours:
        return Step(AgentRole.TUNER, best) if best else Step(AgentRole.CODER)
    last = ours[-1]
    if last.verdict.correct:
        return Step(AgentRole.TUNER, best or last)
    if repair_depth(last, history) < max_repairs:
        return Step(AgentRole.DEBUGGER, last)
    return Step(AgentRole.TUNER, best) if best else Step(AgentRole.CODER)


def recent_failures(history: Sequence[Trial], limit: int = 3) -> list[str]:
    """One line per recent failed LLM trial, newest last (what a fresh coder should avoid)."""
    failed = [t for t in history if t.candidate.origin == ORIGIN and not t.verdict.correct]
    lines = []
    for t in failed[-limit:]:
        message = t.verdict.message.splitlines()[0] if t.verdict.message else ""
        lines.append(f"#{t.candidate_id} {t.verdict.status.value}: {message[:300]}")
    return lines


def attempts_from(subject: Trial, history: Sequence[Trial], limit: int = 4) -> list[str]:
    """One line per earlier LLM attempt derived from ``subject``, so a tuner does not repeat it."""
    lines = []
    base = candidate_ms(subject.verdict)
    for t in history:
        if t.candidate.parent != subject.candidate_id or t.candidate.origin != ORIGIN:
            continue
        ms = candidate_ms(t.verdict)
        if t.verdict.correct and base != float("inf") and ms != float("inf"):
            outcome = f"correct, {ms / base:.2f}x the time of #{subject.candidate_id}"
        else:
            outcome = t.verdict.status.value
        lines.append(f"#{t.candidate_id} ({t.candidate.design.get('agent', '?')}): {outcome}")
    return lines[-limit:]


