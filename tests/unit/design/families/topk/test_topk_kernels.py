"""Top-k: the fusion decision (prologue and epilogue join the selection, or the top-k stays with
PyTorch and says why) and the selection template verified against PyTorch under the
interpreter, on odd row counts, non-power-of-two rows, several k, largest and smallest."""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import forward_task, write_task

from kernelwright.design.capture import capture_path
from kernelwright.design.facts import group_facts
from kernelwright.design.fusion import Partition, fuse
from kernelwright.design.lower import lower
from kernelwright.design.structures import group_options
from kernelwright.skills.library import SkillLibrary

MOE = "torch.topk(torch.softmax(x, dim=-1), {k}, dim=-1{extra})"


def partition(tmp_path: Path, forward: str, inputs: str = "torch.randn(5, 20)") -> Partition:
    path = write_task(tmp_path, forward_task(forward, inputs), "t")
    return fuse(lower(capture_path(path, "small")))


def kinds(part: Partition) -> list[str]:
    return [g.kind for g in part.groups]


# -- fusion ----------------------------------------------------------------------------------


def test_softmax_topk_renormalise_and_index_cast_are_one_group(tmp_path: Path) -> None:
    fwd = (
        f"w, ids = {MOE.format(k=3, extra='')}\n"
        "        return w / w.sum(dim=-1, keepdim=True), ids.to(torch.int32)"
    )
    part = partition(tmp_path, fwd)
    (group,) = part.groups
    ops = [part.graph.node(n).op for n in group.nodes]
    assert group.kind == "select" and group.inputs == ("x",)
    assert ops == ["amax", "sub", "exp", "sum", "div", "topk", "getitem", "getitem", "sum"] + [
        "div",
        "_to_copy",
    ]
    layout = group.layout
    assert layout is not None and layout.reduce == (1,)
    # the k results and what is computed from them live on the k positions; the row sums do not
    narrow = {part.graph.node(n).op for n in layout.narrow}
    assert narrow == {"topk", "getitem", "div", "_to_copy"}
    assert [part.graph.meta(o).dtype for o in group.outputs] == ["float32", "int32"]
    facts = group_facts(part, group)
    assert (facts.kind, facts.k, facts.reduced_length, facts.schedule) == ("select", 3, 20, "row")
    (option,) = group_options(part, group, SkillLibrary.builtin()).options
    assert option.choice.skill == "topk-rounds"
    assert any("top-3 <= 16" in r for r in option.choice.reasons)


def test_plain_topk_uses_the_template(tmp_path: Path) -> None:
    part = partition(tmp_path, "return torch.topk(x, 3, dim=-1)")
    assert kinds(part) == ["select"]
    assert part.groups[0].outputs == tuple(n.name for n in part.graph.nodes[1:])


@pytest.mark.parametrize(
    ("forward", "found", "why"),
    [
        # unsorted results: torch's order is unspecified, so nothing could match it exactly
        (MOE.format(k=3, extra=", sorted=False"), ["reduction", "framework"], "unsorted"),
        # k past the template's unrolled rounds: the softmax keeps its own kernel
        (MOE.format(k=17, extra=""), ["reduction", "framework"], "k <= 16"),
        # along a strided dimension: the template selects along the innermost one only
        ("torch.topk(x * 2.0, 3, dim=0)", ["pointwise", "framework"], "innermost"),
    ],
)
def test_topk_the_template_cannot_take_stays_with_pytorch(
    tmp_path: Path, forward: str, found: list[str], why: str
) -> None:
    part = partition(tmp_path, f"return {forward}[0]", "torch.randn(5, 40)")
    assert kinds(part) == found
    assert why in part.groups[-1].note


def test_a_row_mixed_with_the_k_results_is_refused(tmp_path: Path) -> None:
    """top-12 of 12: the shapes broadcast, but position j of the row is not the j-th selected
    value, so the sum stays out of the selection's group."""
    part = partition(tmp_path, "return torch.topk(x, 12, dim=-1)[0] + x", "torch.randn(5, 12)")
    assert kinds(part) == ["select", "pointwise"]


# -- the template under the interpreter --------------------------------------------------------

# variant rows of 129 (one past a power of two), 9 and 100 columns; the 24 rows of 100 are
# several programs under every ROWS used here (8, or 16 by default at 100 columns) and leave the
# default's last program partial, with fewer interpreted selection rounds than 64 rows would
ROWS = "[[torch.randn(3, 129)], [torch.randn(1, 9)], [torch.randn(24, 100)]]"


@pytest.mark.parametrize("k", [1, 3, 8])
@pytest.mark.parametrize("largest", [True, False])
def test_moe_gating_matches_pytorch(check, k: int, largest: bool) -> None:
    fwd = (
        f"w, ids = {MOE.format(k=k, extra=f', largest={largest}')}\n"
        "        return w / w.sum(dim=-1, keepdim=True), ids.to(torch.int32)"
    )
    # ROWS 8: the 37 rows are 5 programs, the last partial (5 rows)
    (src,) = check(
        forward_task(fwd, "torch.randn(37, 20)", ROWS), skills=("topk-rounds",), params={"ROWS": 8}
    )
    assert "tl.static_range(K)" in src and "torch.ops.aten.topk" not in src


@pytest.mark.parametrize("shape", ["7, 100", "3, 5, 20", "2, 9"])
def test_plain_topk_values_and_indices(check, shape: str) -> None:
    check(
        forward_task("return torch.topk(x, 5, dim=-1)", f"torch.randn({shape})", ROWS),
        skills=("topk-rounds",),
    )


@pytest.mark.parametrize("largest", [True, False])
def test_nan_ranks_above_inf_and_padding_is_never_selected(check, largest: bool) -> None:
    """One NaN per row (torch ranks it above +inf), infinities of both signs, and a row of 5
    (3 padded columns) whose top-5 is the whole row."""
    rows = (
        "[[torch.tensor([[1.0, float('nan'), float('inf'), -float('inf'), 0.5, -0.25, 2.0],"
        " [-float('inf'), -1.0, float('nan'), 3.0, -float('inf'), 7.0, 0.0]])],"
        " [torch.tensor([[4.0, -1.0, -float('inf'), 2.0, 0.0]])]]"
    )
    fwd = f"return torch.topk(x * 1.5, 5, dim=-1, largest={largest})"
    check(forward_task(fwd, "torch.randn(3, 7)"), inputs=rows, skills=("topk-rounds",))


@pytest.mark.parametrize("largest", [True, False])
def test_a_lane_can_give_all_its_columns(check, largest: bool) -> None:
    """Each lane holds 4 adjacent columns: here the 6 largest (or smallest) sit in columns 0-5,
    so the first lane is emptied (its head becomes the never-selected key) before the second
    gives its last two."""
    sign = "" if largest else "-"

    def ramp(n: int) -> str:
        return f"{sign}(torch.arange({n}.0).flip(0) * 0.5 + torch.rand(3, {n}) * 0.1)"

    fwd = f"return torch.topk(x, 6, dim=-1, largest={largest})"
    rows = f"[[{ramp(11)}], [{ramp(9)}], [{ramp(64)}]]"
    check(forward_task(fwd, ramp(11)), inputs=rows, skills=("topk-rounds",))


@pytest.mark.parametrize("largest", [True, False])
def test_rows_shorter_than_a_lane(check, largest: bool) -> None:
    """Rows of 1-3 columns are one lane with padding, which is never selected."""
    fwd = f"return torch.topk(x, 1, dim=-1, largest={largest})"
    variants = "[[torch.randn(3, 2)], [torch.randn(2, 1)]]"
    check(forward_task(fwd, "torch.randn(6, 3)", variants), skills=("topk-rounds",))


def test_bf16_values_stay_exact(check) -> None:
    distinct = "torch.randperm(100).float().reshape(4, 25) - 50.0"
    check(
        forward_task("return torch.topk(x, 4, dim=-1)", distinct),
        inputs=f"[[{distinct}]]",
        dtype="bfloat16",
        skills=("topk-rounds",),
    )


def test_layer_norm_prologue_and_a_weighted_epilogue(check) -> None:
    """A norm (two row reductions) before the selection; a per-position weight and a mean over
    the k results after it."""
    body = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(36)
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 6))
    def forward(self, x):
        v, i = torch.topk(self.norm(x), 6, dim=-1)
        w = v * self.scale
        return w - w.mean(dim=-1, keepdim=True), i
def get_inputs():
    return [torch.randn(2, 11, 36)]
def get_init_inputs():
    return []
"""
    (src,) = check(body, skills=("topk-rounds",))
    assert src.count("_kernel(\n") == 1  # one kernel (besides the lanes' helper)


def test_the_row_itself_is_also_an_output(check) -> None:
    """The softmax is written along the row and its top-4 indices on the k positions, by one
    kernel."""
    fwd = "p = torch.softmax(x, dim=-1)\n        return p, torch.topk(p, 4, dim=-1)[1]"
    (src,) = check(forward_task(fwd, "torch.randn(9, 30)", ROWS), skills=("topk-rounds",))
    assert src.count("_kernel(\n") == 1  # one kernel (besides the lanes' helper)
