"""Inputs revealed call by call: a timed call's true inputs exist in the process once it starts.

A timed batch writes the inputs of all its calls before the first one runs (writing them between
calls would put the judge's own work between the process's kernels). Written as they are, call
``k`` could read call ``k + 1``'s inputs and compute its answer early, fused with its own, and
the batch's time per call would then be a fused batch's throughput, not any call's latency.

So each input tensor of a timed call is written with a *region* replaced by decoy values (the
same tensor's values taken at another offset: the same distribution, no tell), and the true
values of that region go to a staging buffer of their own. The process's runner copies the
staging values in, in stream order, right before the call, and only then hands the inputs
over. An answer computed ahead from the decoy is wrong in the region's outputs, and the judge
compares every element of the calls it picks. The staging buffers and the regions' places
(drawn by the judge per batch) are never handed to the candidate's code.

A region is ``1/FRACTION`` of a tensor (at least ``MIN_ELEMENTS``, at most all of it): enough
that an output depending on it is changed, small enough that copying it costs the call little.
"""

from __future__ import annotations

import random
from typing import Any

FRACTION = 256
MIN_ELEMENTS = 4096
_rng = random.SystemRandom()


def extent(t: Any) -> tuple[int, int]:
    """(units, length): a region of ``t`` runs over ``length`` of its ``units`` (elements for a
    contiguous tensor, rows of the first dimension otherwise)."""
    if t.is_contiguous():
        n = t.numel()
        return n, min(n, max(MIN_ELEMENTS, n // FRACTION))
    n = t.shape[0] if t.dim() else 1
    return n, max(1, n // FRACTION)


def region(t: Any, start: int, length: int) -> Any:
    """The view of ``t`` a region covers: ``length`` units from ``start``."""
    if t.is_contiguous():
        return t.reshape(-1).narrow(0, start, length)
    return t.narrow(0, start, length)


def revealable(v: Any) -> bool:
    import torch

    return isinstance(v, torch.Tensor) and v.numel() > 0


def draw(values: list[Any]) -> list[list[int] | None]:
    """Where this call's regions start, one per input (None where nothing is held back), and
    the offset the decoy values come from."""
    places: list[list[int] | None] = []
    for v in values:
        if not revealable(v):
            places.append(None)
            continue
        units, length = extent(v)
        places.append([_rng.randrange(units - length + 1), length,
                       _rng.randrange(1, units) if units > 1 else 0])
    return places


def staged(values: list[Any], places: list[list[int] | None]) -> list[Any]:
    """The true values of each region (views into ``values``; None where nothing is held)."""
    return [region(v, p[0], p[1]) if p is not None else None
            for v, p in zip(values, places, strict=True)]


def decoys(values: list[Any], places: list[list[int] | None]) -> list[Any]:
    """Values to stand in each region until the call starts: the same tensor's, read ``shift``
    units further on (wrapping around), copied now so writing them later costs one copy."""
    import torch

    out: list[Any] = []
    for v, p in zip(values, places, strict=True):
        if p is None:
            out.append(None)
            continue
        start, length, shift = p
        units, _ = extent(v)
        index = (torch.arange(start, start + length, device=v.device) + shift) % units
        source = v.reshape(-1) if v.is_contiguous() else v
        out.append(source.index_select(0, index).clone())
    return out


def stage_specs(values: list[Any]) -> list[Any]:
    """Tensors shaped like each input's region (for allocating staging buffers), or None."""
    import torch

    out: list[Any] = []
    for v in values:
        if not revealable(v):
            out.append(None)
            continue
        _, length = extent(v)
        part = region(v, 0, length)
        out.append(torch.empty(part.shape, dtype=v.dtype))
    return out


def apply(inputs: list[Any], stages: list[Any], places: Any) -> None:
    """Runner side, right before a call: copy each staged region into its input, in stream
    order. ``places`` comes from the judge's message: anything malformed is an error."""
    if not isinstance(places, list) or len(places) != len(inputs):
        raise ValueError("the regions to reveal do not match the inputs")
    for t, stage, p in zip(inputs, stages, places, strict=True):
        if p is None or stage is None:
            continue
        start, length = int(p[0]), int(p[1])
        region(t, start, length).copy_(stage)
