"""Conditions of the scan skills: which way the scan walks."""

from __future__ import annotations

from kernelwright.skills.base import Fail, Ok, Outcome
from kernelwright.skills.conditions import GroupFacts, condition


@condition("scan_schedule")
def scan_schedule(f: GroupFacts, schedule: str) -> Outcome:
    if f.schedule == schedule:
        how = (
            "innermost: walk rows"
            if schedule == "row"
            else "followed by contiguous dims: walk columns"
        )
        rev = " from the end (suffix scan)" if f.reverse else ""
        return Ok(f"scanned dimension {how}{rev}")
    return Fail(f"the scan is a {f.schedule} scan")
