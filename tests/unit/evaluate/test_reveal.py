"""Timed inputs revealed call by call: regions held back with decoys, then copied in."""

from __future__ import annotations

import pytest
import torch

from kernelwright.evaluate import reveal


def _held_back(values):
    places = reveal.draw(values)
    decoys = reveal.decoys(values, places)
    written = [v.clone() if isinstance(v, torch.Tensor) else v for v in values]
    for buf, fake, spot in zip(written, decoys, places, strict=True):
        if spot is not None:
            reveal.region(buf, spot[0], spot[1]).copy_(fake)
    staging = [s.clone() if s is not None else None for s in reveal.staged(values, places)]
    return written, staging, places


def test_a_region_is_a_fraction_of_a_large_tensor_and_all_of_a_small_one():
    assert reveal.extent(torch.empty(1 << 20)) == (1 << 20, (1 << 20) // reveal.FRACTION)
    assert reveal.extent(torch.empty(30, 30)) == (900, 900)
    # not contiguous: rows of the first dimension
    assert reveal.extent(torch.empty(4096, 512).t()) == (512, 2)


@pytest.mark.parametrize("shape", [(64, 300), (2, 70000), (7,), ()])
def test_the_written_inputs_differ_until_revealed_and_are_exact_after(shape):
    torch.manual_seed(0)
    x = torch.randn(shape)
    labels = torch.randint(0, 10, (500,))
    values = [x, labels, 3, torch.empty(0)]
    written, staging, places = _held_back(values)
    assert places[2] is None and places[3] is None  # nothing to hold back
    if x.numel() > 1:
        assert not torch.equal(written[0], x)  # an answer computed now would be wrong
    reveal.apply(written, staging, places)
    assert torch.equal(written[0], x) and torch.equal(written[1], labels)


def test_a_transposed_input_is_revealed_by_rows():
    x = torch.randn(600, 300).t()  # not contiguous
    written, staging, places = _held_back([x])
    assert not torch.equal(written[0], x)
    reveal.apply(written, staging, places)
    assert torch.equal(written[0], x)


def test_decoys_come_from_the_same_tensor():
    x = torch.arange(100_000, dtype=torch.float32)
    places = reveal.draw([x])
    (fake,) = reveal.decoys([x], places)
    assert set(fake.tolist()) <= set(x.tolist())
    start, length, _ = places[0]
    assert not torch.equal(fake, x[start:start + length])


def test_regions_that_do_not_match_the_inputs_are_refused():
    with pytest.raises(ValueError, match="do not match"):
        reveal.apply([torch.zeros(3)], [None], [])


def test_a_batchs_copies_write_decoys_over_the_inputs_and_the_true_regions_aside():
    """The judge's write of a timed batch, as TimedBuffers.copies lays it out before the clock
    starts: each call's buffers hold its inputs but for the regions, which hold decoys, and its
    staging buffers hold the true regions, so revealing them gives back the inputs exactly."""
    from types import SimpleNamespace

    from kernelwright.evaluate.clock import TimedBuffers, _draw

    torch.manual_seed(0)
    sets = [[torch.randn(64, 300), torch.randint(0, 10, (500,)), 3] for _ in range(2)]
    inputs = [[torch.zeros(64, 300), torch.zeros(500, dtype=torch.int64), None] for _ in sets]
    staging = [[torch.zeros(s.shape, dtype=s.dtype) if s is not None else None
                for s in reveal.stage_specs(values)] for values in sets]
    buffers = TimedBuffers("t", inputs, staging)
    places, decoys = _draw(sets)
    TimedBuffers.write(SimpleNamespace(device="cpu"), buffers.copies(sets, places, decoys, [0, 1]))
    for k, values in enumerate(sets):
        assert not torch.equal(inputs[k][0], values[0])  # a decoy where the region is
        reveal.apply(inputs[k], staging[k], places[k])
        assert torch.equal(inputs[k][0], values[0]) and torch.equal(inputs[k][1], values[1])
