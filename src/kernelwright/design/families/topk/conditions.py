"""Conditions of the top-k skill: how many rounds."""

from __future__ import annotations

from kernelwright.skills.base import Fail, Ok, Outcome
from kernelwright.skills.conditions import GroupFacts, condition


@condition("selected_at_most")
def selected_at_most(f: GroupFacts, limit: int) -> Outcome:
    if f.k <= limit:
        return Ok(f"top-{f.k} <= {limit}: {f.k} unrolled rounds of a row maximum")
    return Fail(f"top-{f.k} > {limit}: the rounds, not the row's bytes, would set the time")
