"""The GEMM family without running a kernel: lowering, fusion of the epilogue, the facts and
conditions with their reasons, defaults, the ranking, and the math each policy gets."""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import captured, designs_for, forward_task, write_task

from kernelwright.design.aten import classify
from kernelwright.design.capture import capture_path
from kernelwright.design.facts import group_facts
from kernelwright.design.families.gemm.helpers import PY_HELPERS
from kernelwright.design.fusion import fuse
from kernelwright.design.lower import lower
from kernelwright.design.structures import group_options
from kernelwright.skills.library import SkillLibrary

torch = pytest.importorskip("torch")

LINEAR_CHAIN = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(48, 64)
        self.gate = nn.Linear(48, 64, bias=False)
        self.down = nn.Linear(64, 48)
    def forward(self, x, r):
        h = F.silu(self.gate(x)) * self.up(x)
        return self.down(h) * 0.5 + (r * 2.0)
def get_inputs():
    return [torch.randn(37, 48), torch.randn(37, 48)]
def get_init_inputs():
    return []
"""


def partition(tmp: Path, body: str):  # type: ignore[no-untyped-def]
    """The task ``body`` lowered and fused at its small size (one capture a process for each
    body: several tests read LINEAR_CHAIN's)."""
    return fuse(lower(captured(write_task(tmp, body))))


def ops(part, group) -> list[str]:  # type: ignore[no-untyped-def]
    return [part.graph.node(n).op for n in group.nodes]


def test_each_product_takes_its_epilogue_but_never_its_operands_producers(tmp_path: Path) -> None:
    part = partition(tmp_path, LINEAR_CHAIN)
    gemms = [g for g in part.groups if g.kind == "gemm"]
    assert [ops(part, g) for g in gemms] == [
        ["mm", "sigmoid", "mul"],  # the gate's silu
        ["mm", "add", "mul"],  # the up projection, its bias and the product with the gate
        ["mm", "add", "mul", "mul", "add"],  # down, bias, scale, and r * 2 merged in
    ]
    assert len(part.groups) == 3  # three kernels, nothing left element-wise
    gate, up, down = gemms
    assert gate.outputs[0] in up.inputs and up.outputs[0] in down.inputs  # operands stay whole


def test_addmm_lowers_to_a_product_and_an_epilogue(tmp_path: Path) -> None:
    body = forward_task(
        "return torch.addmm(c, a, b, beta=0.5, alpha=2.0)",
        "torch.randn(37, 29), torch.randn(37, 45), torch.randn(45, 29)",
        params="c, a, b",
    )
    graph = lower(capture_path(write_task(tmp_path, body), "small"))
    assert [n.op for n in graph.nodes if n.kind == "call"] == ["mm", "mul", "mul", "add"]


@pytest.mark.parametrize(
    ("expr", "inputs", "reduced"),
    [
        ("torch.matmul(a, b)", "torch.randn(37, 100), torch.randn(100, 1)", (1,)),
        ("torch.matmul(a, b)", "torch.randn(1, 100), torch.randn(100, 29)", (0,)),
    ],
)
def test_matrix_vector_products_lower_to_a_sum_of_products(
    tmp_path: Path, expr: str, inputs: str, reduced: tuple[int, ...]
) -> None:
    part = partition(tmp_path, forward_task(f"return {expr}", inputs, params="a, b"))
    assert not any(classify(n) == "matmul" for n in part.graph.nodes)
    (group,) = part.groups
    assert group.kind == "reduction" and ops(part, group) == ["mul", "sum"]


def facts_for(tmp_path: Path, expr: str, inputs: str):  # type: ignore[no-untyped-def]
    part = partition(tmp_path, forward_task(f"return {expr}", inputs, params="a, b"))
    (group,) = part.fused
    return part, group, group_facts(part, group)


def test_facts_name_the_product_and_its_layouts(tmp_path: Path) -> None:
    _, _, f = facts_for(tmp_path, "a.T @ b", "torch.randn(45, 37), torch.randn(45, 29)")
    g = f.gemm
    assert (g.m, g.n, g.k, g.batch) == (37, 29, 45, 1) and f.reduced_length == 45
    assert not g.lhs_k_contiguous and not g.rhs_k_contiguous and not g.tma_aligned
    _, _, f = facts_for(tmp_path, "a @ b.T", "torch.randn(37, 48), torch.randn(24, 48)")
    assert f.gemm.lhs_k_contiguous and f.gemm.rhs_k_contiguous and f.gemm.tma_aligned


def test_skills_hold_with_reasons(tmp_path: Path) -> None:
    lib = SkillLibrary.builtin()
    part, group, f = facts_for(tmp_path, "a @ b", "torch.randn(37, 2112), torch.randn(2112, 40)")
    verdicts = {a.skill.id: a for a in lib.assess(f)}
    assert verdicts["gemm-split-k"].ok and verdicts["gemm-tiled"].ok
    assert any("SMs idle without a split" in r for r in verdicts["gemm-split-k"].reasons)
    assert verdicts["gemm-tma-loads"].ok
    (why,) = verdicts["gemm-tall-skinny"].reasons
    assert "not a tall-skinny product" in why
    # the split ranks first: the tiled kernel alone would fill one SM of 132
    options = group_options(part, group, lib)
    assert options.options[0].choice.skill == "gemm-split-k"
    assert options.options[-1].cost == pytest.approx(132.0)


def test_tall_skinny_and_unaligned_products(tmp_path: Path) -> None:
    lib = SkillLibrary.builtin()
    _, _, f = facts_for(tmp_path, "a @ b", "torch.randn(400, 45), torch.randn(45, 12)")
    verdicts = {a.skill.id: a for a in lib.assess(f)}
    assert verdicts["gemm-tall-skinny"].ok and not verdicts["gemm-split-k"].ok
    assert not verdicts["gemm-tma-loads"].ok
    assert "pointer loads serve it" in verdicts["gemm-tma-loads"].reasons[0]
    d = lib.defaults(lib.get("gemm-tall-skinny"), f)
    assert (d["BLOCK_N"], d["GROUP_M"], d["PROGRAMS_PER_SM"]) == (16, 1, 1)
    tiled = lib.defaults(lib.get("gemm-tiled"), f)
    assert (tiled["BLOCK_M"], tiled["BLOCK_N"], tiled["BLOCK_K"]) == (128, 16, 32)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_default_tiles_and_stages(dtype: str) -> None:
    """128 x 128 tiles and 4 stages for every dtype (measurements.csv)."""
    from kernelwright.skills.conditions import GemmShape, GroupFacts

    lib = SkillLibrary.builtin()
    f = GroupFacts("gemm", dtypes=(dtype,), gemm=GemmShape(4096, 4096, 4096))
    for skill in ("gemm-tiled", "gemm-split-k"):
        d = lib.defaults(lib.get(skill), f)
        assert (d["BLOCK_M"], d["BLOCK_N"], d["BLOCK_K"], d["STAGES"]) == (128, 128, 32, 4)


def test_integer_products_are_left_to_pytorch(tmp_path: Path) -> None:
    body = forward_task(
        "return torch.matmul(a, b)",
        "torch.randint(0, 5, (37, 45)), torch.randint(0, 5, (45, 29))",
        params="a, b",
    )
    part, designs = designs_for(write_task(tmp_path, body))
    assert designs == [] and part.fused[0].kind == "gemm"
    (go,) = [group_options(part, g, SkillLibrary.builtin()) for g in part.fused]
    assert any("tl.dot takes fp32, bf16 and fp16 only" in " ".join(r) for _, r in go.skipped)


@pytest.mark.parametrize(
    ("precision", "first", "vendor_units"),
    [("fp32", "gemm-tiled", 1.5), ("tf32", "gemm-vendor", 1.0), ("bf16", "gemm-tiled", 1.0)],
)
def test_cublas_with_our_epilogue_ranks_first_where_it_outruns_the_tiled_kernel(
    tmp_path: Path, precision: str, first: str, vendor_units: float
) -> None:
    """Under tf32 cuBLAS's TF32 products run ~1.45x faster than the tiled kernel's: PyTorch's
    product with our epilogue kernel ranks first. Under bf16 the two are within the ranking's
    tie (1.08x): the skills' expected gains put the tiled kernel first, the vendor path after.
    Under fp32 cuBLAS's CUDA cores run 1.5x the 3xTF32 kernel's time."""
    from kernelwright.design.families.gemm import TENSOR_CORE_TILED

    lib = SkillLibrary.builtin()
    part = partition(tmp_path, LINEAR_CHAIN)
    down = [g for g in part.groups if g.kind == "gemm"][-1]  # bias, scale and residual
    options = group_options(part, down, lib, precision=precision).options
    assert options[0].choice.skill == first
    # the one tile of 37 x 48 outputs fills one SM of 132, cuBLAS's as the tiled kernel's
    (vendor,) = [o for o in options if o.choice.skill == "gemm-vendor"]
    assert vendor.cost == pytest.approx(132 * vendor_units)
    tiled = [o for o in options if o.choice.skill == "gemm-tiled"]
    units = {"fp32": 1.0, "tf32": TENSOR_CORE_TILED["tf32"], "bf16": TENSOR_CORE_TILED["16-bit"]}
    assert all(o.cost == pytest.approx(132 * units[precision]) for o in tiled)


def test_a_bias_alone_is_no_epilogue_for_the_vendor_path(tmp_path: Path) -> None:
    """PyTorch's addmm adds a bias inside cuBLAS's call: the vendor path with our kernel for it
    would only add a pass over the output."""
    body = forward_task("return torch.matmul(a, b) + c",
                        "torch.randn(37, 45), torch.randn(45, 29), torch.randn(29)",
                        params="a, b, c")
    part = partition(tmp_path, body)
    (group,) = part.fused
    go = group_options(part, group, SkillLibrary.builtin(), precision="tf32")
    assert "gemm-vendor" not in [o.choice.skill for o in go.options]
    (why,) = [r for sid, r in go.skipped if sid == "gemm-vendor"]
    assert "PyTorch's addmm" in why[0]


@pytest.fixture
def matmul_policy():  # type: ignore[no-untyped-def]
    saved = torch.backends.cuda.matmul.allow_tf32
    yield
    torch.backends.cuda.matmul.allow_tf32 = saved


def test_the_math_follows_the_policy_and_is_never_lowered(matmul_policy) -> None:  # type: ignore[no-untyped-def]
    scope: dict = {"torch": torch}
    exec(PY_HELPERS["_dot_precision"], scope)
    precision = scope["_dot_precision"]
    fp32, bf16 = torch.zeros(2, dtype=torch.float32), torch.zeros(2, dtype=torch.bfloat16)
    torch.backends.cuda.matmul.allow_tf32 = False  # the fp32 policy
    assert precision(fp32, "tf32x3") == "tf32x3" and precision(fp32, "ieee") == "ieee"
    torch.backends.cuda.matmul.allow_tf32 = True  # the tf32 policy
    assert precision(fp32, "tf32x3") == "tf32"
    assert precision(bf16, "tf32x3") is None  # bf16 operands on tensor cores either way


def test_the_file_names_its_math(tmp_path: Path) -> None:
    from design_checks import with_params

    from kernelwright.design.emit import emit

    path = write_task(tmp_path, LINEAR_CHAIN)
    part, designs = designs_for(path)
    text = emit(part, designs[0], path.read_text(), task_name="t", size="small")
    header = " ".join(text.split('"""')[1].split())
    assert "3xTF32" in header and "allow_tf32" in header and "fp32 accumulation" in header
    ieee = emit(part, with_params(designs[0], {"FP32_MATH": 1}), path.read_text(), task_name="t")
    assert '_dot_precision(lhs, "ieee")' in ieee
    assert "IEEE fp32" in " ".join(ieee.split('"""')[1].split())


def test_the_plan_names_the_math_of_each_policy(tmp_path: Path) -> None:
    from kernelwright.design.plan import plan_task
    from kernelwright.design.report import plan_markdown
    from kernelwright.task import load_task

    task = load_task(write_task(tmp_path, LINEAR_CHAIN), size="small")
    text = "\n".join(plan_markdown(plan_task(task, "cpu", "small", isolate=False)))
    assert text.count("- math by policy: fp32: 3xTF32") == 3  # one line per GEMM group
    assert "tf32: TF32 tensor-core products" in text and "bf16: bf16 tensor-core" in text



def test_the_vendor_paths_math_is_cublass_under_each_policy() -> None:
    from kernelwright.design.families.gemm.precision import math_under

    assert math_under("fp32", 0, "vendor").startswith("cuBLAS IEEE fp32")
    assert math_under("tf32", 0, "vendor").startswith("cuBLAS TF32 tensor-core products")
    assert "rounded to bf16" in math_under("bf16", 0, "vendor")
    assert math_under("fp32", 0).startswith("3xTF32")  # the tiled kernels' own
