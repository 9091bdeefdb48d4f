"""Element-wise chains, scans and pooling: verified against PyTorch under the interpreter."""

from __future__ import annotations

import pytest
from design_checks import scan_task


def unary_task(expr: str, shape: str = "3, 5, 7") -> str:
    return f"""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return {expr}
def get_inputs():
    return [torch.randn({shape}) * 4.0]
def get_input_variants():
    return [[torch.randn(2, 3, 129) * 4.0], [torch.randn(1, 1, 1)]]
def get_init_inputs():
    return []
"""


@pytest.mark.parametrize(
    "expr",
    [
        'F.gelu(x, approximate="tanh")',
        "F.gelu(x)",
        "F.silu(x)",
        "F.softplus(x, beta=0.5, threshold=20.0)",
        "F.mish(x)",
        "torch.where(x > 0, x, 0.1 * x).clamp(-2.0, 3.0) ** 2",
        "torch.sigmoid(x) * torch.tanh(x) + torch.log1p(x.abs()) - torch.expm1(-x.abs())",
        "F.hardswish(x) + F.elu(x) + F.leaky_relu(x, 0.2)",
    ],
)
def test_elementwise_flat(check, expr: str) -> None:
    (src,) = check(unary_task(expr), skills=("elementwise-flat",))
    assert "offs = pid * BLOCK" in src


def test_per_channel_broadcast_uses_rows_and_columns(check) -> None:
    body = """
class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.act = nn.PReLU(num_parameters=channels)
        with torch.no_grad():
            self.act.weight.uniform_(0.05, 0.5)
    def forward(self, x):
        return self.act(x)
def get_inputs():
    return [torch.randn(3, 5, 6, 7)]
def get_input_variants():
    return [[torch.randn(1, 5, 3, 129)]]
def get_init_inputs():
    return [5]
"""
    (src,) = check(body, skills=("elementwise-rows",))
    kernel = src.split("def elementwise_0(")[0]
    assert "rows_1 = " in src and "//" not in kernel.split("\n    cols =")[1]  # no per-element //


def test_sliced_halves_and_trailing_broadcast(check) -> None:
    body = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x, bias):
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up + bias
def get_inputs():
    return [torch.randn(3, 37, 90), torch.randn(37, 45)]
def get_input_variants():
    return [[torch.randn(2, 37, 18), torch.randn(37, 9)]]
def get_init_inputs():
    return []
"""
    check(body, skills=("elementwise-rows",))


@pytest.mark.parametrize(
    ("expr", "extra_arg", "inputs", "variant"),
    [
        ("torch.cumsum(x, dim=-1)", "", "torch.randn(7, 100)", "torch.randn(3, 301)"),
        (
            "torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])",
            "",
            "torch.randn(7, 100)",
            "torch.randn(2, 33)",
        ),
        (
            "torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])",
            "",
            "torch.randn(5, 3)",
            "torch.randn(4, 1)",
        ),
        ("torch.cumsum(x, dim=-1) - x", "", "torch.randn(5, 37)", "torch.randn(3, 65)"),
        (
            "torch.cumprod(x, dim=-1)",
            "",
            "torch.rand(7, 100) * 0.5 + 0.75",
            "torch.rand(2, 70) + 0.5",
        ),
        (
            "torch.flip(torch.cumprod(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])",
            "",
            "torch.rand(7, 100) * 0.5 + 0.75",
            "torch.rand(2, 33) + 0.5",
        ),
        (
            "torch.cumsum(x * mask.unsqueeze(-1), dim=1)",
            ", mask",
            "torch.randn(3, 37, 20), torch.rand(3, 37) < 0.7",
            "torch.randn(2, 9, 5), torch.rand(2, 9) < 0.5",
        ),
        (
            "torch.flip(torch.cumsum(torch.flip(x, dims=[1]), dim=1), dims=[1])",
            "",
            "torch.randn(3, 37, 20)",
            "torch.randn(2, 9, 5)",
        ),
    ],
    ids=[
        "forward",
        "reverse",
        "reverse-short",
        "exclusive",
        "product",
        "reverse-product",
        "masked-column",
        "reverse-column",
    ],
)
@pytest.mark.parametrize(
    "params",
    [
        {"BLOCK_N": 16, "BLOCK_S": 4, "COLS": 4, "STAGES": 2},
        {"BLOCK_N": 8, "ROWS": 4, "WARPS": 1, "BLOCK_S": 8, "COLS": 16, "STAGES": 1},
    ],
    ids=["blocks", "rows"],
)
def test_scans(check, expr: str, extra_arg: str, inputs: str, variant: str, params) -> None:
    body = scan_task(expr, extra_arg, inputs, variant)
    (src,) = check(body, params=params)
    assert "num_stages=STAGES" in src  # the block loop is pipelined
    if "flip" in expr:
        assert "torch.flip" not in src
    if "flip(torch.cumsum" in expr:
        # no lane reversal: a row sum reads vectors from the end, a column walk rows downwards
        assert "reverse=True" not in src
        assert ("tl.split" in src) == ("dims=[-1]" in expr)


POOL = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = {module}
    def forward(self, x):
        return self.pool(x)
def get_inputs():
    return [torch.randn({shape})]
def get_input_variants():
    return [[torch.randn({variant})]]
def get_init_inputs():
    return []
"""


@pytest.mark.parametrize(
    ("module", "shape", "variant"),
    [
        ("nn.MaxPool1d(kernel_size=5, stride=2, padding=2)", "3, 5, 37", "2, 3, 20"),
        ("nn.AvgPool1d(kernel_size=4, stride=3, padding=1)", "3, 5, 37", "2, 3, 20"),
        ("nn.AvgPool1d(kernel_size=5, stride=2, padding=2)", "3, 5, 37", "2, 3, 20"),
        ("nn.MaxPool2d(kernel_size=3, stride=2, padding=1)", "3, 5, 9, 11", "2, 4, 8, 13"),
        ("nn.MaxPool2d(kernel_size=2, stride=2, ceil_mode=True)", "2, 3, 9, 11", "1, 2, 7, 5"),
        (
            "nn.MaxPool2d(kernel_size=3, stride=1, padding=1, dilation=2)",
            "2, 3, 9, 13",
            "1, 2, 7, 8",
        ),
        ("nn.MaxPool2d((1, 3), (1, 2), (0, 1))", "2, 3, 5, 19", "1, 2, 3, 8"),
        (
            "nn.AvgPool2d(kernel_size=3, stride=1, padding=1, count_include_pad=False)",
            "3, 5, 7, 9",
            "2, 3, 4, 11",
        ),
        (
            "nn.AvgPool2d(kernel_size=3, stride=2, padding=1, ceil_mode=True)",
            "2, 3, 8, 9",
            "1, 2, 5, 5",
        ),
        ("nn.AvgPool2d(kernel_size=2, stride=2, divisor_override=3)", "2, 3, 8, 10", "1, 2, 5, 5"),
        ("nn.AvgPool3d(kernel_size=3, stride=2, padding=1)", "2, 3, 5, 7, 9", "1, 2, 4, 6, 5"),
        ("nn.AvgPool3d((1, 3, 3), 1, (0, 1, 1))", "2, 3, 4, 7, 9", "1, 2, 3, 6, 5"),
        ("nn.MaxPool3d(kernel_size=2, stride=2)", "2, 3, 5, 7, 9", "1, 2, 4, 6, 5"),
        ("nn.MaxPool3d(kernel_size=3, stride=2, padding=1)", "2, 3, 5, 7, 9", "1, 2, 4, 6, 5"),
    ],
    ids=[
        "max1d",
        "avg1d",
        "avg1d-overlap",
        "max2d",
        "max2d-ceil",
        "max2d-dilated",
        "max2d-unit-height",
        "avg2d-same-exclude-pad",
        "avg2d-ceil",
        "avg2d-divisor",
        "avg3d",
        "avg3d-unit-depth",
        "max3d",
        "max3d-overlap",
    ],
)
@pytest.mark.parametrize(
    "params",
    [
        {"BLOCK_W": 8, "ROWS": 2, "STEPS": 2, "WARPS": 1},
        {"BLOCK_W": 16, "ROWS": 4, "STEPS": 3, "WARPS": 4},
    ],
    ids=["small-tile", "wide-tile"],
)
def test_pooling(check, module: str, shape: str, variant: str, params) -> None:
    body = POOL.format(module=module, shape=shape, variant=variant)
    (src,) = check(body, skills=("pool-window",), params=params)
    kernel = src[src.index("@triton.jit") : src.index("def pool_0(")]
    # every load precedes the first store: a store would fence the loads after it
    assert kernel.rindex("tl.load(") < kernel.index("tl.store(")


def test_max_pooling_propagates_nan(check) -> None:
    body = POOL.format(
        module="nn.MaxPool2d(kernel_size=3, stride=2, padding=1)",
        shape="2, 3, 9, 11",
        variant="1, 2, 5, 5",
    )
    nan = "torch.where(torch.rand(2, 3, 9, 11) < 0.05, float('nan'), torch.randn(2, 3, 9, 11))"
    check(body, skills=("pool-window",), inputs=f"[[{nan}]]")


def test_concatenated_pieces_are_written_by_one_kernel(check) -> None:
    body = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x, cos, sin):
        heads = x.view(x.shape[0], -1, 16)
        x1, x2 = heads.chunk(2, dim=-1)
        c, s = cos.unsqueeze(1), sin.unsqueeze(1)
        return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).view(x.shape)
def get_inputs():
    return [torch.randn(7, 48), torch.randn(7, 8), torch.randn(7, 8)]
def get_input_variants():
    return [[torch.randn(3, 32), torch.randn(3, 8), torch.randn(3, 8)]]
def get_init_inputs():
    return []
"""
    (src,) = check(body)
    assert "torch.ops.aten.cat" not in src and "pieces of the concatenation" in src


@pytest.mark.parametrize("expr", ["F.mish(x)", "x * torch.tanh(F.softplus(x, threshold=12.0))"])
def test_mish_prints_one_exp_and_one_division(check, expr: str) -> None:
    """tanh(softplus(x)) becomes n(n+2)/(n(n+2)+2) with n = e^x (no log, no second exp), and
    still matches PyTorch from -100 to 100, across the threshold and at 0, inf and nan."""
    extremes = (
        "[[torch.cat([torch.tensor([-100.0, -30.0, -20.0, -1e-6, 0.0, 1e-6, 8.9, 9.1, 11.9, "
        "12.1, 19.9, 20.1, 40.0, 100.0, float('inf'), float('-inf'), float('nan')]), "
        "torch.randn(111) * 8.0]).reshape(2, 4, 16)]]"
    )
    (src,) = check(unary_task(expr), skills=("elementwise-flat",), inputs=extremes)
    kernel = src.split("def elementwise_0_kernel")[1].split("def elementwise_0(")[0]
    assert "_tanh_softplus(" in kernel and "_log1p(" not in kernel and "tl.exp" not in kernel


def test_softplus_with_a_low_threshold_keeps_its_chain(check) -> None:
    """Past a threshold of 2, softplus is x and tanh(x) is not 1: no rewrite there."""
    (src,) = check(
        unary_task("torch.tanh(F.softplus(x, threshold=2.0))"), skills=("elementwise-flat",)
    )
    assert "_tanh_softplus(" not in src
