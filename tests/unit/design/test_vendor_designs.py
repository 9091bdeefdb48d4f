"""A design may leave one matrix product, convolution or attention to PyTorch's own kernels while
the rest of the model runs on kernelwright's: ranked last, in the tree and population searches'
structure moves, and said in the emitted file's header."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelwright.design.plan import plan_task
from kernelwright.search.decisions import DecisionSpace
from kernelwright.task import load_task

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def conv_pool_plan():  # type: ignore[no-untyped-def]
    """A 3 x 3 convolution + ReLU, then an average pool: two groups, one a product."""
    task = load_task(ROOT / "heldout" / "level2" / "34_conv2d_relu_avg_pool.py", "small")
    return plan_task(task, "cpu", "small", isolate=False)


def test_the_last_design_leaves_the_convolution_to_pytorch(conv_pool_plan) -> None:  # type: ignore[no-untyped-def]
    plan = conv_pool_plan
    kinds = [[c.kind for c in d.choices] for d in plan.designs]
    assert kinds[0] == ["conv", "pool"] and kinds[-1] == ["pool"], kinds
    assert sum(k == ["pool"] for k in kinds) == 1  # one design per product group
    first, vendor = plan.designs[0], plan.designs[-1]
    assert vendor.choices[0] == first.choices[1]  # the rest as in the first design
    source = plan.render(vendor)
    header = source.split('"""')[1]
    assert "Left to PyTorch by this design" in header and "aten.convolution" in header
    assert "(no template)" not in header
    assert "torch.ops.aten.convolution.default(" in source  # PyTorch runs it
    assert "Left to PyTorch" not in plan.render(first).split('"""')[1]


def test_a_single_group_is_never_left_to_pytorch() -> None:
    task = load_task(ROOT / "kernelbench" / "level2" / "1_Conv2D_ReLU_BiasAdd.py", "small")
    plan = plan_task(task, "cpu", "small", isolate=False)
    assert plan.designs and all(len(d.choices) == 1 for d in plan.designs)


def test_structure_moves_leave_a_product_group_to_pytorch(conv_pool_plan) -> None:  # type: ignore[no-untyped-def]
    space = DecisionSpace.of_plan(conv_pool_plan)
    first = conv_pool_plan.designs[0]
    moves = {label: d for d, label in space.structure_moves(first)}
    (label,) = [k for k in moves if k.endswith("-> PyTorch")]
    assert label.startswith("g0 ") and [c.kind for c in moves[label].choices] == ["pool"]
    # the pool is no product: no move drops it
    assert not any(k.startswith("g1 ") and k.endswith("PyTorch") for k in moves)
    # a design of one group has no such move: it would be the task's own model
    (alone,) = [d for d in moves.values() if len(d.choices) == 1]
    assert not [k for d, k in space.structure_moves(alone) if k.endswith("PyTorch")]


def test_the_report_says_which_groups_the_best_design_leaves_to_pytorch(conv_pool_plan) -> None:  # type: ignore[no-untyped-def]
    from kernelwright.design.report import _left_by_design
    from kernelwright.records import Candidate

    plan = conv_pool_plan

    def candidate(design):  # type: ignore[no-untyped-def]
        return Candidate(plan.render(design), origin="template", design=design.to_json(),
                         params=design.params_json())

    (line,) = _left_by_design(plan, candidate(plan.designs[-1]))
    assert line.startswith("This design leaves g0 (convolution, relu) to PyTorch"), line
    assert _left_by_design(plan, candidate(plan.designs[0])) == []
    assert _left_by_design(plan, Candidate("class ModelNew: ...", origin="llm")) == []


def test_the_plan_names_the_groups_a_design_leaves_to_pytorch(conv_pool_plan) -> None:  # type: ignore[no-untyped-def]
    from kernelwright.design.report import plan_markdown

    designs = [ln for ln in plan_markdown(conv_pool_plan) if ln.startswith("- d0")]
    assert designs[-1].endswith("; g0 left to PyTorch"), designs
    assert not any("left to PyTorch" in ln for ln in designs[:-1])


@pytest.mark.parametrize(("precision", "second"), [("bf16", "vendor"), ("fp32", "ours")])
def test_a_product_that_fuses_nothing_meets_the_vendor_second(precision: str, second: str) -> None:
    """A linear layer whose only epilogue is its bias, then GroupNorm and a mean: under bf16
    the GEMM kernel runs on the tensor cores cuBLAS uses and fuses nothing cuBLAS's addmm does
    not, so the design leaving it to PyTorch is the second one measured; under fp32 (3xTF32
    against cuBLAS's CUDA-core fp32) it stays last."""
    task = load_task(ROOT / "heldout" / "level2" / "44_linear_group_norm_token_mean.py", "small")
    plan = plan_task(task, "cuda", "small", isolate=False, precision=precision)
    kinds = [[c.kind for c in d.choices] for d in plan.designs]
    assert kinds[0][0] == "gemm", kinds
    vendor_at = [k[0] for k in kinds].index("reduction")  # the design without the GEMM group
    assert vendor_at == (1 if second == "vendor" else len(kinds) - 1), kinds


def test_a_product_with_a_fused_epilogue_keeps_the_vendor_last() -> None:
    """A convolution with ReLU fused, then an average pool, under bf16: the fused kernel saves
    a pass over the convolution's output, so every variant of it comes before the vendor's."""
    task = load_task(ROOT / "heldout" / "level2" / "34_conv2d_relu_avg_pool.py", "small")
    plan = plan_task(task, "cuda", "small", isolate=False, precision="bf16")
    kinds = [[c.kind for c in d.choices] for d in plan.designs]
    assert kinds[-1] == ["pool"] and sum(k == ["pool"] for k in kinds) == 1, kinds
