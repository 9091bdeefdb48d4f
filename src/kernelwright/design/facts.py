"""Facts about a fusion group that the skills' conditions read (shapes at the design's size):
each kernel family says what its skills may look at (``Family.facts``)."""

from __future__ import annotations

import dataclasses

from kernelwright.design.fusion import Group, Partition
from kernelwright.skills.conditions import GroupFacts

H200_SMS = 132
FLOATS = ("float16", "bfloat16", "float32", "float64")
POLICIES = ("fp32", "tf32", "bf16")


def group_facts(
    partition: Partition,
    group: Group,
    device: str = "cuda",
    sm_count: int = H200_SMS,
    precision: str = "fp32",
) -> GroupFacts:
    """The facts of one fused group, from the family of its kind, with the policy and the
    dtypes the group reads when it runs under ``precision`` (the graph is captured in the
    task's own dtypes)."""
    from kernelwright.design.families import family

    facts = family(group.kind).facts(partition, group, device, sm_count)
    return dataclasses.replace(
        facts, dtypes=policy_dtypes(facts.dtypes, precision), precision=precision
    )


def policy_dtypes(dtypes: tuple[str, ...], precision: str) -> tuple[str, ...]:
    """``dtypes`` as the group reads them under ``precision`` (sorted, once each): under bf16
    the harness casts every floating input and weight to bfloat16
    (``evaluate.precision.prepare_model``, ``cast_value``); under fp32 and tf32 the captured
    dtypes stand. Integers and booleans never change."""
    if precision not in POLICIES:
        raise ValueError(f"precision {precision!r}: one of {', '.join(POLICIES)}")
    if precision != "bf16":
        return dtypes
    return tuple(sorted({"bfloat16" if d in FLOATS else d for d in dtypes}))
