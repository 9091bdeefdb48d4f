"""Integer ranges (``torch.arange``) computed from the index of the kernel that reads them:
``torch.triu``/``tril`` (which PyTorch decomposes into two ranges, a difference and a
comparison), position masks and position-weighted values, in element-wise kernels, in a matrix
product's epilogue and in a row reduction's prologue. Checked against PyTorch under the
interpreter at shapes that are no powers of two."""

from __future__ import annotations

from kernelwright.design.aten import classify, index_range
from kernelwright.design.graph import Node, TensorMeta

TRIU_OF_PRODUCT = """
class Model(nn.Module):
    def forward(self, A, B):
        return torch.triu(torch.matmul(A, B))
def get_inputs():
    return [torch.randn(72, 40), torch.randn(40, 56)]
def get_input_variants():
    return [[torch.randn(33, 40), torch.randn(40, 90)]]
def get_init_inputs():
    return []
"""

TRIL_OF_PRODUCT_OFFSET = """
class Model(nn.Module):
    def forward(self, A, B):
        return torch.tril(torch.matmul(A, B), diagonal=-3) + 1.0
def get_inputs():
    return [torch.randn(50, 48), torch.randn(48, 50)]
def get_input_variants():
    return []
def get_init_inputs():
    return []
"""

TRIU_ELEMENTWISE = """
class Model(nn.Module):
    def forward(self, x):
        return torch.triu(x * 2.0, diagonal=2), torch.tril(x)
def get_inputs():
    return [torch.randn(3, 37, 45)]
def get_input_variants():
    return []
def get_init_inputs():
    return []
"""

POSITIONS = """
class Model(nn.Module):
    def forward(self, x):
        pos = torch.arange(5, 5 + 3 * x.shape[1], 3, device=x.device)
        late = (torch.arange(x.shape[0], device=x.device) >= 4).unsqueeze(1)
        return x * pos + late
def get_inputs():
    return [torch.randn(21, 30)]
def get_input_variants():
    return [[torch.randn(9, 14)]]
def get_init_inputs():
    return []
"""

WIDE_PRODUCTS = """
class Model(nn.Module):
    def forward(self, x):
        rows = torch.arange(x.shape[0], device=x.device).unsqueeze(1)
        cols = torch.arange(x.shape[1], device=x.device)
        return x + (rows * cols * 700000).float()
def get_inputs():
    return [torch.randn(70, 90)]
def get_input_variants():
    return []
def get_init_inputs():
    return []
"""

MASKED_SOFTMAX = """
class Model(nn.Module):
    def forward(self, x):
        cols = torch.arange(x.shape[-1], device=x.device)
        rows = torch.arange(x.shape[-2], device=x.device).unsqueeze(-1)
        return torch.softmax(x.masked_fill(cols > rows, float("-inf")), dim=-1)
def get_inputs():
    return [torch.randn(2, 47, 47)]
def get_input_variants():
    return []
def get_init_inputs():
    return []
"""


def _arange(target: str, args: tuple, dtype: str = "int64") -> Node:
    return Node("r", "call", target, args, (), (TensorMeta(("n",), (7,), (1,), dtype),))


def test_integer_ranges_are_index_ranges() -> None:
    assert index_range(_arange("aten.arange.default", (7,))) == (0, 1)
    assert index_range(_arange("aten.arange.start", (2, 9))) == (2, 1)
    assert index_range(_arange("aten.arange.start_step", (9, -5, -2))) == (9, -2)
    assert classify(_arange("aten.arange.start_step", (0, 7))) == "index"
    # a float range rounds its elements; a runtime start is no literal
    assert classify(_arange("aten.arange.start_step", (0, 7), "float32")) == "framework"
    assert classify(_arange("aten.arange.start_step", (0.5, 7))) == "framework"


def test_triu_of_a_product_is_the_products_epilogue(check) -> None:
    """torch.triu(A @ B): the two ranges, their difference and the mask join the GEMM's
    epilogue; nothing is left to PyTorch (before, the ranges were framework calls and their
    int64 tensors made the product's group look like an integer GEMM)."""
    (src, *_) = check(TRIU_OF_PRODUCT, skills=["gemm-tiled"])
    assert "aten.arange" not in src[src.index("class ModelNew") :]
    assert "left to PyTorch" not in src


def test_tril_with_an_offset_and_an_epilogue_after_it(check) -> None:
    check(TRIL_OF_PRODUCT_OFFSET, skills=["gemm-tiled"])


def test_triu_and_tril_of_an_element_wise_value(check) -> None:
    (src, *_) = check(TRIU_ELEMENTWISE)
    assert "left to PyTorch" not in src


def test_ranges_with_a_start_and_a_step_and_a_comparison(check) -> None:
    (src, *_) = check(POSITIONS)
    assert "left to PyTorch" not in src


def test_int64_ranges_stay_64_bit(check) -> None:
    """Products of positions past 2^31 (69 x 89 x 700000): PyTorch computes them in int64."""
    (src, *_) = check(WIDE_PRODUCTS)
    assert ".to(tl.int64)" in src


def test_a_position_mask_in_a_softmax(check) -> None:
    """A causal mask built from two ranges, in the prologue of a row softmax."""
    check(MASKED_SOFTMAX)
