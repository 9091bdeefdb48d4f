"""The pooling tile plan and the pool defaults: pure Python, no Triton."""

from __future__ import annotations

import pytest

from kernelwright.design.families.pool.template import (
    MAX_UNROLLED_LOADS,
    PoolSpec,
    fitting_steps,
    fold_unit_windows,
    plan_tile,
    unrolled_loads,
)
from kernelwright.design.kernel.common import DesignError
from kernelwright.skills.base import Condition
from kernelwright.skills.conditions import GroupFacts, PoolShape, check
from kernelwright.skills.heuristics import defaults_for


def spec(kernel: int, stride: int, padding: int, nsp: int = 2) -> PoolSpec:
    """A max pooling with the same window along every pooled dimension."""
    return PoolSpec(
        "max", nsp, (kernel,) * nsp, (stride,) * nsp, (padding,) * nsp, (1,) * nsp, False
    )


@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "vec", "pieces"),
    [
        # ResNet stem max pool: 2 outputs read one aligned vector and the left halo element
        (3, 2, 1, 2, ((-1, 1), (0, 4))),
        # stride-1 "same" window: 4 outputs, one vector and one halo element on each side
        (3, 1, 1, 4, ((-1, 1), (0, 4), (4, 1))),
        # avg_pool1d k5 s2 p2: a 2-element halo is one 8-byte load
        (5, 2, 2, 2, ((-2, 2), (0, 4), (4, 1))),
        # stride 3: 4 outputs span 12 inputs, three vectors and a halo element
        (3, 3, 1, 4, ((-1, 1), (0, 4), (4, 4), (8, 4))),
        # non-overlapping 2x2: the chunk is the vector
        (2, 2, 0, 2, ((0, 4),)),
    ],
)
def test_width_axis_loads_whole_aligned_vectors(
    kernel: int, stride: int, padding: int, vec: int, pieces: tuple[tuple[int, int], ...]
) -> None:
    tile = plan_tile(spec(kernel, stride, padding))
    assert (tile.vec, tile.pieces) == (vec, pieces)
    assert tile.span % 4 == 0  # every chunk starts on a 16-byte boundary
    for off, width in tile.pieces:
        assert off % width == 0


def test_tile_axes_follow_the_pooled_dimensions() -> None:
    three = plan_tile(spec(3, 2, 1, nsp=3))
    assert three.batch_pooled and three.rolls and three.batch.k == 3 and three.roll.k == 3
    two = plan_tile(spec(3, 2, 1, nsp=2))
    assert not two.batch_pooled and two.rolls and two.batch.k == 1
    one = plan_tile(spec(5, 2, 2, nsp=1))
    assert not one.rolls
    # overlapping windows share input rows: 4 outputs of stride 2, kernel 3 read 9 rows, not 12
    assert two.slices(4) == list(range(9))


def test_leading_unit_windows_become_planes() -> None:
    one_d_as_2d = PoolSpec("avg", 2, (1, 5), (1, 2), (0, 2), (1, 1), False)
    folded = fold_unit_windows(one_d_as_2d)
    assert (folded.nsp, folded.kernel, folded.stride, folded.padding) == (1, (5,), (2,), (2,))
    assert fold_unit_windows(spec(3, 2, 1)).nsp == 2


def pool_facts(*out: int) -> GroupFacts:
    return GroupFacts("pool", "", out, 9, 1, 1, window=9)


def test_pool_defaults_for_the_suite_shapes() -> None:
    # 23 avg_pool1d: rows are planes, one 512-output row per program and one warp
    d = defaults_for("pool", pool_facts(96, 128, 1, 8192))
    assert (d["BLOCK_W"], d["ROWS"], d["WARPS"]) == (512, 1, 1)
    # 24/25: whole 112/128-wide rows, 8 unrolled output rows
    d = defaults_for("pool", pool_facts(80, 64, 112, 112))
    assert (d["BLOCK_W"], d["ROWS"], d["STEPS"]) == (128, 4, 8)
    # 26 max_pool3d: 64-wide rows, 4 output rows of 8 unrolled output slices
    d = defaults_for("pool", pool_facts(16, 32, 32, 64, 64))
    assert (d["BLOCK_W"], d["ROWS"], d["STEPS"]) == (64, 4, 8)


def test_steps_shrink_until_the_unrolled_program_fits() -> None:
    # an 11 x 11 window of stride 11 (KernelBench's average pooling): 11 input rows an output,
    # each read in 11 vector loads; 8 steps would unroll 968 loads
    big = plan_tile(PoolSpec("avg", 2, (11, 11), (11, 11), (0, 0), (1, 1), False))
    assert unrolled_loads(big, 8) == 88 * 11 == 968
    assert fitting_steps(big, 8) == 1 and unrolled_loads(big, 1) <= MAX_UNROLLED_LOADS
    # small windows keep every step asked for
    stem = plan_tile(spec(3, 2, 1))
    assert fitting_steps(stem, 8) == 8
    three = plan_tile(spec(3, 2, 1, nsp=3))
    assert fitting_steps(three, 8) == 8


def test_a_window_too_large_even_at_one_step_has_no_kernel() -> None:
    huge = plan_tile(spec(11, 11, 0, nsp=3))  # 11 rows x 11 batch taps x 11 loads a row
    with pytest.raises(DesignError, match="too large to compile"):
        fitting_steps(huge, 4)


def tap_facts(kernel: int, stride: int, out: tuple[int, ...]) -> GroupFacts:
    """A 2-D pooling's facts with the same window along H and W."""
    shape = PoolShape((kernel, kernel), (stride, stride), (1, 1))
    return GroupFacts("pool", "", out, kernel * kernel, 1, 1, window=kernel**2, pool=shape)


@pytest.mark.parametrize(
    ("stride", "holds"),
    [(1, False), (2, False), (4, False), (3, True), (5, True), (8, True), (11, True)],
)
def test_the_tap_tile_applies_where_the_window_templates_loads_are_strided(
    stride: int, holds: bool
) -> None:
    # strides 1, 2 and 4: a chunk of the window template is one 16-byte vector; any other
    # stride spreads a warp's lanes several vectors apart (stride 8: 2, stride 11: 11)
    outcome = check(Condition("w_stride_spans_vectors"), tap_facts(stride, stride, (4, 8, 8)))
    assert outcome.ok == holds, outcome


def test_tap_tile_defaults() -> None:
    # KernelBench's 11 x 11 average pooling (186 outputs a row): 64 outputs x 16 taps, 2 rows
    d = defaults_for("pool-tap-tile", tap_facts(11, 11, (16, 64, 186, 186)))
    assert (d["BLOCK_W"], d["ROWS"], d["WARPS"]) == (64, 2, 4)
    # 3 taps pad to 4: 8 rows of 64; a narrow output keeps a 16-wide block
    d = defaults_for("pool-tap-tile", tap_facts(3, 3, (8, 8, 40, 40)))
    assert (d["BLOCK_W"], d["ROWS"]) == (64, 8)
    d = defaults_for("pool-tap-tile", tap_facts(5, 5, (8, 8, 5, 5)))
    assert (d["BLOCK_W"], d["ROWS"]) == (16, 8)
