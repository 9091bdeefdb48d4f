"""A group norm averaged over space reads its input once (lowering's
``statistics_from_finer_means``): per-channel means and variances in one pass, the group's
statistics combined from them; where the normalised tensor is needed the norm is left as it
was."""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import module_task, write_task

from kernelwright.design.capture import capture_path
from kernelwright.design.channel_statistics import COMBINED
from kernelwright.design.fusion import fuse
from kernelwright.design.graph import OpGraph
from kernelwright.design.lower import lower

# 4 rows a program: the group rows (6 and 3 of the images, 6 of the volumes' variant) leave a
# block of rows partly empty
LOOP = {"LOOP_BLOCK": 16, "LOOP_COLS": 8, "LOOP_ROWS": 4, "SPLIT_PROGRAMS": 16}
# channel means far from zero and spread apart: the combined variance adds the spread of the
# channel means to their own variances, which a sum of squares would lose to cancellation
IMAGES = ("torch.randn(2, 12, 5, 7) * 2.0 + torch.arange(12.0).view(1, 12, 1, 1) * 8.0",
          "[[torch.randn(1, 12, 3, 5) + 40.0]]")
VOLUMES = ("torch.randn(2, 8, 3, 5, 7) * 2.0 + 1.0", "[[torch.randn(3, 8, 2, 3, 5) + 4.0]]")


def _group_norm(forward: str, channels: int = 12, inputs: tuple[str, str] = IMAGES) -> str:
    """GroupNorm(channels / 4, channels) as ``self.norm`` (weight in [0.5, 1.5], bias in
    [-0.5, 0.5]), the forward returning ``forward`` of x."""
    init = (f"self.norm = nn.GroupNorm({channels // 4}, {channels})\n"
            "        torch.nn.init.uniform_(self.norm.weight, 0.5, 1.5)\n"
            "        torch.nn.init.uniform_(self.norm.bias, -0.5, 0.5)")
    return module_task(init, forward, inputs)


def _lowered(tmp_path: Path, body: str) -> OpGraph:
    return lower(capture_path(write_task(tmp_path, body), "full"))


def _combined(graph: OpGraph) -> bool:
    return any(n.origin == COMBINED for n in graph.nodes)


def _full_size_reductions(graph: OpGraph) -> int:
    """How many reduction groups read a value of the input's size: passes over the norm's
    input (the activation before it is a group of its own)."""
    size = graph.meta(graph.user_inputs[0].name).numel
    part = fuse(graph)
    return sum(g.kind == "reduction" and any(part.graph.meta(v).numel == size for v in g.inputs)
               for g in part.groups)


@pytest.mark.parametrize(
    "body",
    [
        _group_norm("self.norm(torch.relu(x)).mean(dim=[2, 3])"),
        # keepdim changes the output's shape only: the rule's path is images'
        pytest.param(_group_norm("self.norm(torch.relu(x)).mean(dim=(2, 3), keepdim=True)"),
                     marks=pytest.mark.slow),
        _group_norm("self.norm(F.hardswish(x)).mean(dim=[2, 3, 4])", 8, VOLUMES),
    ],
    ids=["images", "keepdim", "volumes"],
)
def test_a_group_norm_averaged_over_space_reads_its_input_once_and_matches_pytorch(
    check, tmp_path: Path, body: str
) -> None:
    graph = _lowered(tmp_path, body)
    assert _combined(graph)
    assert _full_size_reductions(graph) == 1
    check(body, params=LOOP, tol=1e-4)


@pytest.mark.parametrize(
    ("taken", "left"),
    [
        # the normalised tensor is the output: the norm reads x again anyway
        (_group_norm("self.norm(x).mean(dim=[2, 3])"),
         _group_norm("(y := self.norm(x)) * y.mean(dim=[2, 3], keepdim=True)")),
        # no finer mean of the norm's input: its statistics stay one pass over each group
        (_group_norm("self.norm(x).mean(dim=[2, 3])"),
         _group_norm("self.norm(x).amax(dim=[2, 3])")),
    ],
    ids=["normalised-tensor-needed", "no-finer-mean"],
)
def test_the_norm_is_left_where_its_normalised_tensor_or_no_finer_mean_is_there(
    tmp_path: Path, taken: str, left: str
) -> None:
    assert _combined(_lowered(tmp_path, taken))
    assert not _combined(_lowered(tmp_path, left))
