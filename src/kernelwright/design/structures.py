"""Stage 1 (structure): which skill drives each fusion group, ranked by expected gain.

For every fused group the library's skills are checked against the group's facts; each primary
skill whose conditions hold becomes an option, with the modifier skills that apply to its variant
(online softmax, Welford) and their reasons. An option the template cannot render for this group
is dropped with the template's reason. Designs are made by taking the best option everywhere,
then changing one group at a time; last, where a design has several groups, the best design
with one matrix product, convolution or attention left to PyTorch (the vendor's cuBLAS, cuDNN or
SDPA kernels, the other groups still ours): a model whose one product kernel loses to the
vendor's keeps the rest of its gain instead of falling back whole. Where the largest product's
kernel fuses nothing beyond its bias (a convolution followed by a norm) and runs on the units
the vendor's does (tensor cores under bf16 and tf32; CUDA cores for a direct convolution), it
can only win on its own speed against the vendor's: the design leaving it to PyTorch then
comes second.

Ranking is cost first: each kernel family estimates an option's cost (``Family.cost``); for
the memory-bound reductions it is the number of sweeps over the input (one for a one-pass or
split kernel, the pass count for a looped one) divided by the fraction of the GPU its programs
fill; a design's cost weighs its groups by their domain sizes. Costs within 10% of the cheapest
tie (and so on, in steps of 10%), and ties
are broken by the product of expected gains, scaled by what the archive measured for each skill.
The archive's measurements (speed-ups over eager, which depend on how good eager is on each
task) therefore reorder only designs that move the same bytes: they cannot put a looped kernel
that reads a 1000-class row twice above the one-pass kernel that reads it once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kernelwright.design.choices import Design, GroupChoice
from kernelwright.design.emit import render_group
from kernelwright.design.facts import group_facts
from kernelwright.design.fusion import Group, Partition
from kernelwright.design.kernel.common import DesignError
from kernelwright.skills.conditions import GroupFacts
from kernelwright.skills.library import SkillLibrary

TIE = 1.1  # costs within this factor of the cheapest are equal: the gains decide
# Groups whose kernels a vendor library also offers (cuBLAS, cuDNN, SDPA): a design may leave one
# of them to PyTorch and keep the rest
PRODUCT_KINDS = frozenset({"gemm", "conv", "attention"})
# At most this share of a ranking's designs leave a product group to PyTorch (the heaviest first)
VENDOR_SHARE = 4


@dataclass(frozen=True, slots=True)
class Option:
    """One way to build a group: its ranking score (expected gains times the archive's prior)
    and its estimated cost (sweeps of the input over the fraction of the GPU it fills)."""

    choice: GroupChoice
    score: float
    cost: float = 1.0


@dataclass
class GroupOptions:
    """A group's facts, its ranked options and the skills skipped (with reasons)."""

    group: Group
    facts: GroupFacts
    options: list[Option] = field(default_factory=list)
    skipped: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


def group_options(
    partition: Partition,
    group: Group,
    library: SkillLibrary,
    device: str = "cuda",
    prior: Mapping[str, float] | None = None,
    precision: str = "fp32",
) -> GroupOptions:
    """Check every skill for ``group`` and rank the options that hold, for its dtypes under
    the ``precision`` policy."""
    facts = group_facts(partition, group, device, precision=precision)
    result = GroupOptions(group, facts)
    assessments = library.assess(facts)
    modifiers = [a for a in assessments if a.skill.is_modifier]
    for m in modifiers:
        if not m.ok:
            result.skipped.append((m.skill.id, m.reasons))
    prior = prior or {}
    for a in assessments:
        if a.skill.is_modifier:
            continue
        if not a.ok:
            result.skipped.append((a.skill.id, a.reasons))
            continue
        params = library.defaults(a.skill, facts)
        mods = [m for m in modifiers if m.ok and a.skill.variant in m.skill.modifies]
        variants = [tuple(mods)]
        if mods and a.skill.variant in ("looped", "tiled", "splitk"):
            variants.append(())  # the same structure without the modifiers measures what they pay
        for chosen in variants:
            choice = GroupChoice(
                group.id,
                group.kind,
                a.skill.id,
                a.skill.variant,
                tuple(m.skill.id for m in chosen),
                params,
                a.reasons + tuple(r for m in chosen for r in m.reasons),
            )
            try:
                render_group(partition.graph, group, choice, f"probe_{group.id}")
            except DesignError as exc:
                result.skipped.append((a.skill.id, (f"template: {exc}",)))
                break
            except Exception as exc:  # a template bug must cost this option, not the run
                result.skipped.append(
                    (a.skill.id, (f"template failed: {type(exc).__name__}: {exc}",))
                )
                break
            score = a.skill.expected_gain * prior.get(a.skill.id, 1.0)
            for m in chosen:
                score *= m.skill.expected_gain * prior.get(m.skill.id, 1.0)
            cost = option_cost(partition, group, facts, choice)
            result.options.append(Option(choice, score, cost))
    cheapest = min((o.cost for o in result.options), default=1.0)
    result.options.sort(key=lambda o: (cost_class(o.cost, cheapest), -o.score))
    return result


def option_cost(
    partition: Partition, group: Group, facts: GroupFacts, choice: GroupChoice
) -> float:
    """The option's estimated cost, from its family (``Family.cost``): sweeps over the group's
    input divided by the fraction of the SMs its programs fill, for a reduction."""
    from kernelwright.design.families import family

    return family(group.kind).cost(partition, group, facts, choice)


def cost_class(cost: float, cheapest: float) -> int:
    """0 for costs within a factor :data:`TIE` of the cheapest, 1 within TIE^2, and so on."""
    return math.floor(math.log(max(cost / cheapest, 1.0)) / math.log(TIE) + 1e-9)


def rank_designs(per_group: Sequence[GroupOptions], limit: int = 12) -> list[Design]:
    """Designs, most promising first: the best option everywhere, then one group changed, then
    (at most ``limit // VENDOR_SHARE`` of them) the best design with one product group left to
    PyTorch, the largest product first."""
    usable = [g for g in per_group if g.options]
    if not usable:
        return []
    n_vendor = min(max(1, limit // VENDOR_SHARE), len(vendor_groups(usable)))
    limit = max(1, limit - n_vendor) if len(usable) > 1 else limit
    best = tuple(g.options[0] for g in usable)
    sizes = [max(1, g.facts.numel) for g in usable]
    combos = [best]
    for i, g in enumerate(usable):
        combos += [best[:i] + (alt,) + best[i + 1 :] for alt in g.options[1:]]
    cheapest = min(_cost(c, sizes) for c in combos)
    combos.sort(key=lambda c: (cost_class(_cost(c, sizes), cheapest), -_score(c)))
    designs: list[Design] = []
    seen: set[str] = set()
    for combo in combos:
        d = Design(tuple(o.choice for o in combo))
        if d.structure_key() not in seen:
            seen.add(d.structure_key())
            designs.append(d)
        if len(designs) >= limit:
            break
    if len(usable) == 1:  # left to PyTorch, the only group is the task's own model
        return designs
    first = designs[0]
    products = vendor_groups(usable)[:n_vendor]
    vendor = [Design(tuple(c for c in first.choices if c.group != g)) for g in products]
    if vendor and _vendor_peer(usable, products[0], first):
        # its kernel competes with the vendor's alone (nothing fused to save a pass over): the
        # design that leaves it to PyTorch is measured second, not after every variant
        designs.insert(1, vendor.pop(0))
    return designs + vendor


def _vendor_peer(usable: Sequence[GroupOptions], gid: int, design: Design) -> bool:
    """Whether ``design``'s kernel for product group ``gid`` (a matrix product or convolution)
    fuses no element-wise epilogue beyond its own bias (which the vendor's call adds too) and
    runs on the units the vendor's kernel runs on under the group's policy: tensor cores for
    16-bit or TF32 operands, CUDA cores for a direct convolution's fp32 sums. (Under fp32 the
    vendor's products run on CUDA cores, where a 3xTF32 tensor-core kernel is in another
    class.)"""
    (g,) = [g for g in usable if g.group.id == gid]
    (choice,) = [c for c in design.choices if c.group == gid]
    shape = g.facts.gemm
    # a convolution's own bias is not counted as its epilogue; a matrix product's bias (or one
    # added matrix) is the add that PyTorch's addmm makes in the vendor's call
    own = ("add",) if g.group.kind == "gemm" else ()
    if shape is None or shape.epilogue not in ((), own):
        return False
    return g.facts.precision != "fp32" or choice.variant == "direct"


def vendor_groups(usable: Sequence[GroupOptions]) -> list[int]:
    """The product groups (matrix products, convolutions, attention) a design may leave to
    PyTorch, the one with the most output elements first."""
    products = sorted((g for g in usable if g.group.kind in PRODUCT_KINDS),
                      key=lambda g: -g.facts.numel)
    return [g.group.id for g in products]


def _score(combo: Sequence[Option]) -> float:
    return math.prod(o.score for o in combo)


def _cost(combo: Sequence[Option], sizes: Sequence[int]) -> float:
    """The groups' costs weighted by their domain sizes (a big group's sweeps dominate)."""
    return sum(o.cost * n for o, n in zip(combo, sizes, strict=True)) / sum(sizes)
