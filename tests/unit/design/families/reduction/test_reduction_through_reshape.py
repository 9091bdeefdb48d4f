"""A reduction of a reshaped value reads the value in its own layout (lowering's
``reductions_before_reshapes``): a group norm's output reduced over every dimension but the
batch joins the norm's kernel, which then writes no normalised tensor; reshapes that split a
reduced run, or match only at the capture size, are left alone."""

from __future__ import annotations

import pytest
from design_checks import module_task

from kernelwright.design.builder import contiguous_strides
from kernelwright.design.graph import TensorMeta
from kernelwright.design.reshapes import _reshape_runs

# blocks of 16: each 7 x 9 plane ends in a masked block; 4 rows a program: the group norm's
# 6 rows (2 x 3 groups) leave the second program's block of rows half empty
LOOP = {"LOOP_BLOCK": 16, "LOOP_COLS": 8, "LOOP_ROWS": 4, "SPLIT_PROGRAMS": 16}


def _meta(shape: tuple[str, ...], hint: tuple[int, ...]) -> TensorMeta:
    return TensorMeta(shape, hint, contiguous_strides(hint), "float32")


def test_runs_pair_split_and_merged_dimensions() -> None:
    grouped = _meta(("s0", "4", "3", "(s1)*(s2)"), (2, 4, 3, 35))
    image = _meta(("s0", "12", "s1", "s2"), (2, 12, 5, 7))
    assert _reshape_runs(grouped, image) == [([0], [0]), ([1, 2], [1]), ([3], [2, 3])]


def test_runs_refuse_a_match_that_holds_at_the_capture_size_only() -> None:
    # 6 x 5 and 5 x 6 hold the same count here, but (s1, 6) is no reshape of (5, s2) in general
    a = _meta(("s0", "s1", "6"), (2, 5, 6))
    v = _meta(("s0", "5", "s2"), (2, 5, 6))
    assert _reshape_runs(a, v) is None
    assert _reshape_runs(a, _meta(("s0", "(s1)*6"), (2, 30))) == [([0], [0]), ([1, 2], [1])]


IMAGES = ("torch.randn(2, 12, 7, 9) * 2.0 + 1.0",
          "[[torch.randn(1, 12, 5, 3)], [torch.randn(2, 12, 4, 4) + 50.0]]")


def _group_norm_then(reduce: str, groups: int = 3, channels: int = 12,
                     inputs: tuple[str, str] = IMAGES) -> str:
    """A task: GroupNorm (weight in [0.5, 1.5], bias in [-0.5, 0.5]) of x, then ``reduce`` of
    its output ``y``; ``inputs``: the input and the variants' list."""
    init = (f"self.norm = nn.GroupNorm({groups}, {channels})\n"
            "        with torch.no_grad():\n"
            "            self.norm.weight.uniform_(0.5, 1.5)\n"
            "            self.norm.bias.uniform_(-0.5, 0.5)")
    forward = f"(lambda y: {reduce})(self.norm(x))"
    return module_task(init, forward, inputs)


@pytest.mark.parametrize(
    "reduce",
    [
        # the next test checks this body, at a tighter tolerance
        pytest.param("y.mean(dim=[1, 2, 3])", marks=pytest.mark.slow),
        # the first case's path without its division, keeping the dimensions
        pytest.param("y.sum(dim=[1, 2, 3], keepdim=True)", marks=pytest.mark.slow),
        "torch.amax(y, dim=(1, 2, 3))",
        "y.mean(dim=[2, 3])",  # per channel: (group, channel in group) reshaped to channels
        "y.mean(dim=1, keepdim=True)",
    ],
)
def test_a_reduction_of_a_group_norm_reads_it_in_the_norms_layout(check, reduce: str) -> None:
    """Each reduction reads the norm's (N, G, C/G, H x W) output as the norm's kernel computes
    it: the view back to (N, C, H, W) is never made. Over all but the batch (the first three
    cases) the reduction joins the norm's kernel (partials a group, then a sum over the groups),
    so the normalised tensor is not written at all (the next test)."""
    # the sum adds 192 normalised values of a group whose mean is 50: fp32's rounding of that
    # mean shifts every one of them alike, so the tolerance is that of a 192-term sum
    for src in check(_group_norm_then(reduce), params=LOOP, tol=2e-3):
        forward = src.split("def forward")[1]
        assert "native_group_norm_out" not in forward, forward


def test_a_mean_over_all_but_the_batch_joins_the_norms_kernel(check) -> None:
    """The norm's kernel stores only the per-group partial sums: no output of the size of its
    input is allocated by its wrapper."""
    for src in check(_group_norm_then("y.mean(dim=[1, 2, 3])"), params=LOOP, tol=1e-4):
        forward = src.split("def forward")[1]
        assert "mean_part, = reduce_0(" in forward and "mean, = reduce_1(mean_part)" in forward


def test_a_reduction_that_splits_a_merged_run_keeps_the_reshape(check) -> None:
    """A mean over the rows alone cuts the norm's (H x W) run: the reshape back to
    (N, C, H, W) still runs, and the result is right."""
    for src in check(_group_norm_then("y.mean(dim=2)"), params=LOOP, tol=1e-4):
        assert "native_group_norm_out = " in src.split("def forward")[1]


def test_a_group_norm_of_features_averaged_per_row(check) -> None:
    """GroupNorm over a (rows, features) input views it (rows, groups, features a group, 1):
    the mean over the features reduces that trailing extent-1 dimension too, and the result
    has one value a row (the split of the reduction into the norm's part and the rest keeps
    every dimension the reduction names)."""
    body = _group_norm_then("y.mean(dim=1)", 4, 24, (
        "torch.randn(7, 24)", "[[torch.randn(5, 24) * 3.0 + 2.0]]"))
    for src in check(body, params=LOOP, tol=1e-4):
        assert "native_group_norm_out" not in src.split("def forward")[1]


def test_a_softmax_over_a_flattened_view_keeps_its_one_kernel(check) -> None:
    """Every step of a softmax over ``x.view(N, -1)`` reads the view: its maximum is not moved
    to the unflattened input (which would split it from the sum of exponentials it fuses
    with); one kernel computes the whole softmax."""
    body = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.softmax(x.view(x.shape[0], -1), dim=1)
def get_inputs():
    return [torch.randn(5, 3, 7, 9)]
def get_input_variants():
    return [[torch.randn(2, 3, 4, 5) * 4.0]]
def get_init_inputs():
    return []
"""
    for src in check(body, params=LOOP, tol=1e-4):
        forward = src.split("def forward")[1]
        assert "= reduce_0(" in forward and "reduce_1" not in forward, forward


@pytest.mark.parametrize(
    "activation",
    [
        # the next case's path (one element-wise op moved before the view), which adds a
        # single-value operand: this one runs with -m slow
        pytest.param("torch.nn.functional.silu(y)", marks=pytest.mark.slow),
        "y * torch.sigmoid(y) + 0.5",
        "torch.nn.functional.hardswish(y).clamp(max=2.0)",
    ],
)
def test_an_activation_of_a_group_norm_joins_the_norms_kernel(check_launches, activation) -> None:
    """An element-wise op of the norm's output viewed back to (N, C, H, W), whose other
    operands are single values, runs before the view (lowering's ``sink_reshapes``): one
    kernel computes the norm and the activation, and the normalised tensor is never stored."""
    runs = check_launches(_group_norm_then(activation), params=LOOP, tol=1e-4)
    assert runs and all(len(set(launched)) == 1 for _, launched in runs), runs


def test_a_per_channel_operand_after_the_view_keeps_its_own_kernel(check_launches) -> None:
    """A per-channel scale varies along C, which the norm's layout splits into (G, C/G): the
    op stays after the view, in a kernel of its own, and the result is right."""
    body = _group_norm_then("y * torch.arange(12.0).view(12, 1, 1)")
    runs = check_launches(body, params=LOOP, tol=1e-4)
    assert runs and all(len(set(launched)) == 2 for _, launched in runs), runs


def test_a_norm_of_a_flattened_view_keeps_its_square_with_its_sum(check_launches) -> None:
    """``F.normalize(x.reshape(B, -1))`` squares the view for its sum: the square stays in the
    view's layout with the reduction that reads it (moved before the view, it would be a
    kernel of its own and the sum another), so the whole norm is one kernel."""
    body = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.nn.functional.normalize(x.reshape(x.shape[0], -1))
def get_inputs():
    return [torch.randn(6, 5, 7)]
def get_input_variants():
    return [[torch.randn(3, 4, 9)]]
def get_init_inputs():
    return []
"""
    runs = check_launches(body, params=LOOP, tol=1e-4)
    assert runs and all(len(set(launched)) == 1 for _, launched in runs), runs
