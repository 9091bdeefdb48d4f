"""Element-wise chains (flat and tiled), concatenations, and the algebra of mish: verified
against PyTorch under the interpreter."""

from __future__ import annotations

import pytest


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


def test_a_buffer_sliced_to_the_calls_size_at_other_sizes(check) -> None:
    """``buf[:T, :T]`` of a 64 x 64 buffer: at capture (T = 64) its rows chain (stride 64 = 64 x
    1), but at T = 37 they are 64 apart, not 37: a view PyTorch makes between kernels is indexed
    per dimension with its runtime strides, never with one stride from its capture strides."""
    body = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.randn(64, 64))
    def forward(self, x):
        T = x.size(-1)
        return torch.sigmoid(x) * self.buf[:T, :T]
def get_inputs():
    return [torch.randn(64, 64)]
def get_input_variants():
    return [[torch.randn(37, 37)]]
def get_init_inputs():
    return []
"""
    check(body, skills=("elementwise-flat",))


def test_a_one_value_tensor_the_forward_makes_is_a_literal(check) -> None:
    """``torch.tensor(v)`` in the forward (export lifts it to a constant input, which the file
    had no value for): the kernels read it as a literal; one read by PyTorch is made afresh."""
    body = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        y = torch.min(x * 2.0, torch.tensor(0.25, device=x.device))
        return y + torch.tensor(3, device=x.device), torch.tensor(1.5) + 0.0
def get_inputs():
    return [torch.randn(7, 48)]
def get_init_inputs():
    return []
"""
    (src,) = check(body)
    assert "lifted_tensor_0_ptr" not in src and "tl.minimum(mul, 0.25" in src
    assert "scalar_tensor.default(1.5, dtype=torch.float32)" in src


@pytest.mark.parametrize(
    "expr",
    [
        "torch.relu(x)",
        "torch.clamp(x, -0.5, 0.5) + torch.clamp_min(x, 0.1) + torch.clamp_max(x, 0.2)",
        "F.hardtanh(x) + F.relu6(x)",
        "F.hardswish(x) + F.hardsigmoid(x)",
        "torch.maximum(x, x * 0.5) + torch.minimum(x, torch.tensor(0.0, device=x.device))",
    ],
)
def test_maxima_and_clamps_keep_nan_as_pytorch_does(check, expr: str) -> None:
    """relu, clamps, hardtanh and friends of NaN are NaN in PyTorch, where the GPU's max and
    min return the other operand: the kernels ask for NaN-propagating maxima and match PyTorch
    on NaN, infinities and signed zeros (the interpreter's maxima propagate NaN either way, so
    the source is checked too; the sm90 conv test checks the compiled max.NaN)."""
    extremes = (
        "[[torch.tensor([float('nan'), -float('nan'), 0.0, -0.0, 1.0, -1.0, 7.0, -7.0, "
        "float('inf'), float('-inf')] * 5).reshape(2, 5, 5)]]"
    )
    (src,) = check(unary_task(expr), skills=("elementwise-flat",), inputs=extremes)
    assert "propagate_nan=tl.PropagateNan.ALL" in src
