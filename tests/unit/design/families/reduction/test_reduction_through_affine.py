"""A mean over dimensions along which a norm's statistics, scale and shift are constant
reduces the norm's input, and the norm's affine map follows on the reduced values (lowering's
``reductions_through_affine``): the normalised tensor is neither written nor read back. Each
test pairs a case the rule takes with one it must leave alone, differing in one respect."""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import module_task, write_task

from kernelwright.design.affine_reductions import REDUCED_FIRST
from kernelwright.design.capture import capture_path
from kernelwright.design.fusion import fuse
from kernelwright.design.graph import OpGraph
from kernelwright.design.lower import lower

# 4 rows a program: the group norm's 6 and 3 rows (batches of 2 and 1, 3 groups) leave a
# block of rows partly empty
LOOP = {"LOOP_BLOCK": 16, "LOOP_COLS": 8, "LOOP_ROWS": 4, "SPLIT_PROGRAMS": 16}
IMAGES = ("torch.randn(2, 12, 5, 7) * 2.0 + 1.0", "[[torch.randn(1, 12, 3, 5) + 4.0]]")


def _task(init: str, forward: str, inputs: tuple[str, str] = IMAGES) -> str:
    """A task whose ``__init__`` runs ``init`` (one line) and whose forward returns
    ``forward`` of x."""
    return module_task(init, forward, inputs)


VOLUMES = ("torch.randn(2, 8, 3, 5, 7) * 2.0 + 1.0", "[[torch.randn(3, 8, 2, 3, 5) + 4.0]]")


def _group_norm(forward: str, channels: int = 12, inputs: tuple[str, str] = IMAGES) -> str:
    """GroupNorm(channels / 4, channels), weight in [0.5, 1.5] and bias in [-0.5, 0.5], as
    ``self.norm``."""
    init = (f"self.norm = nn.GroupNorm({channels // 4}, {channels}); "
            "torch.nn.init.uniform_(self.norm.weight, 0.5, 1.5); "
            "torch.nn.init.uniform_(self.norm.bias, -0.5, 0.5)")
    return _task(init, forward, inputs)


def _batch_norm(forward: str) -> str:
    """BatchNorm2d(12) as captured (inference: the running statistics), with statistics,
    weight and bias away from their defaults, as ``self.norm``."""
    init = ("self.norm = nn.BatchNorm2d(12); self.norm.running_mean.uniform_(-1.0, 1.0); "
            "self.norm.running_var.uniform_(0.5, 2.0); "
            "torch.nn.init.uniform_(self.norm.weight, 0.5, 1.5); "
            "torch.nn.init.uniform_(self.norm.bias, -0.5, 0.5)")
    return _task(init, forward)


def _per_channel(forward: str) -> str:
    """A per-channel (12, 1, 1) parameter ``self.w`` and a per-pixel (5, 7) one ``self.p``."""
    init = ("self.w = nn.Parameter(torch.rand(12, 1, 1) + 0.5); "
            "self.p = nn.Parameter(torch.rand(5, 7) + 0.5)")
    return _task(init, forward, ("torch.randn(3, 12, 5, 7)", "[]"))


def _lowered(tmp_path: Path, body: str) -> OpGraph:
    return lower(capture_path(write_task(tmp_path, body), "full"))


def _reduces_first(tmp_path: Path, body: str) -> bool:
    """Whether lowering moved a reduction before the element-wise chain it read."""
    return any(n.origin == REDUCED_FIRST for n in _lowered(tmp_path, body).nodes)


def _full_size_writes(graph: OpGraph) -> list[str]:
    """The values of the input's size that a fusion group writes."""
    size = graph.meta(graph.user_inputs[0].name).numel
    part = fuse(graph)
    return [v for g in part.groups for v in g.outputs if part.graph.meta(v).numel == size]


@pytest.mark.parametrize(
    "body",
    [
        _group_norm("self.norm(x).mean(dim=[2, 3])"),
        # keepdim changes the output's shape only: the rule's path is group-norm's
        pytest.param(_group_norm("self.norm(x).mean(dim=(2, 3), keepdim=True)"),
                     marks=pytest.mark.slow),
        # the model and inputs of test_statistics_from_finer_means' volumes, checked there
        pytest.param(_group_norm("self.norm(F.hardswish(x)).mean(dim=[2, 3, 4])", 8, VOLUMES),
                     marks=pytest.mark.slow),
        _batch_norm("self.norm(x).mean(dim=(2, 3))"),
        _batch_norm("F.adaptive_avg_pool2d(self.norm(x), 1)"),
        _per_channel("(-x * self.w / 3.0).sum(dim=(2, 3))"),
    ],
    ids=["group-norm", "group-norm-keepdim", "group-norm-volume", "batch-norm", "batch-norm-pool",
         "sum-scaled"],
)
def test_a_reduction_of_an_affine_map_reduces_first_and_matches_pytorch(
    check, tmp_path: Path, body: str
) -> None:
    assert _reduces_first(tmp_path, body)
    check(body, params=LOOP, tol=1e-4)


def test_a_group_norm_averaged_over_space_writes_no_normalised_tensor(tmp_path: Path) -> None:
    """What remains of a full size is the norm's input: the statistics and the per-channel
    means both read it, and the norm's affine map runs on (N, C) values."""
    graph = _lowered(tmp_path, _group_norm("self.norm(torch.relu(x)).mean(dim=[2, 3])"))
    assert _full_size_writes(graph) == ["relu"]


@pytest.mark.parametrize(
    ("taken", "left"),
    [
        # an activation between the norm and the mean is not affine
        (_group_norm("self.norm(x).mean(dim=[2, 3])"),
         _group_norm("torch.relu(self.norm(x)).mean(dim=[2, 3])")),
        # a per-pixel operand varies along the reduced dimensions
        (_per_channel("(x * self.w).mean(dim=(2, 3))"),
         _per_channel("(x * self.p).mean(dim=(2, 3))")),
        # the norm's output is read by more than the mean (x minus its own spatial mean)
        (_batch_norm("self.norm(x).mean(dim=(2, 3), keepdim=True)"),
         _batch_norm("(y := self.norm(x)) - y.mean(dim=(2, 3), keepdim=True)")),
        # a sum counts an added term once per element: only scaling passes it
        (_per_channel("(x * self.w).sum(dim=(2, 3))"),
         _per_channel("(x + self.w).sum(dim=(2, 3))")),
        # x * x is not affine in x
        (_per_channel("(x * self.w).mean(dim=(2, 3))"),
         _per_channel("(x * x).mean(dim=(2, 3))")),
        # a divide by x is not affine in x
        (_per_channel("(x / self.w).mean(dim=(2, 3))"),
         _per_channel("(self.w / x).mean(dim=(2, 3))")),
    ],
    ids=["activation", "varying-operand", "other-reader", "sum-of-shift", "square", "divisor"],
)
def test_the_rule_leaves_what_is_not_an_affine_map_of_one_tensor(
    tmp_path: Path, taken: str, left: str
) -> None:
    assert _reduces_first(tmp_path, taken)
    assert not _reduces_first(tmp_path, left)
