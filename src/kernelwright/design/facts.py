"""Facts about a fusion group that the skills' conditions read (shapes at the design's size):
each kernel family says what its skills may look at (``Family.facts``)."""

from __future__ import annotations

from kernelwright.design.fusion import Group, Partition
from kernelwright.skills.conditions import GroupFacts

H200_SMS = 132


def group_facts(
    partition: Partition, group: Group, device: str = "cuda", sm_count: int = H200_SMS
) -> GroupFacts:
    """The facts of one fused group, from the family of its kind."""
    from kernelwright.design.families import family

    return family(group.kind).facts(partition, group, device, sm_count)
