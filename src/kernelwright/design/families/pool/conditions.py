"""Conditions of the pooling skills: how large the window is."""

from __future__ import annotations

from kernelwright.skills.base import Fail, Ok, Outcome
from kernelwright.skills.conditions import GroupFacts, condition


@condition("window_at_least")
def window_at_least(f: GroupFacts, taps: int) -> Outcome:
    if f.window >= taps:
        return Ok(f"a window of {f.window} taps (at least {taps})")
    return Fail(f"a window of {f.window} taps, fewer than {taps}")
