"""``torch.fmod`` (the dividend's sign, C's) and ``torch.remainder`` / ``%`` (the divisor's
sign, Python's) in element-wise kernels, on floats and integers of both signs, checked against
PyTorch under the interpreter."""

from __future__ import annotations

FLOATS = """
class Model(nn.Module):
    def forward(self, x, y):
        return torch.fmod(x, 1.5), torch.fmod(x, -0.75), x % 2.5, torch.remainder(x, -1.25), \\
            torch.remainder(x, y), torch.fmod(x, y)
def get_inputs():
    return [torch.randn(23, 41) * 7, torch.randn(23, 41) + torch.sign(torch.randn(23, 41))]
def get_input_variants():
    return []
def get_init_inputs():
    return []
"""

INTEGERS = """
class Model(nn.Module):
    def forward(self, x):
        pos = torch.arange(-7, x.shape[1] - 7, device=x.device)
        return x * (pos % 3) + torch.fmod(pos, 4) - torch.remainder(pos, -5)
def get_inputs():
    return [torch.randn(9, 37)]
def get_input_variants():
    return [[torch.randn(4, 11)]]
def get_init_inputs():
    return []
"""


def test_float_fmod_and_remainder_match_pytorch(check) -> None:
    (src, *_) = check(FLOATS)
    assert "left to PyTorch" not in src and "_remainder(" in src


def test_integer_fmod_and_remainder_of_positions(check) -> None:
    (src, *_) = check(INTEGERS)
    assert "left to PyTorch" not in src
