"""The wrapper's K-major copies (``_k_major``): which operands are copied, and their strides."""

from __future__ import annotations

from typing import Any

import pytest

from kernelwright.design.families.gemm.helpers import PY_HELPERS

torch = pytest.importorskip("torch")


def k_major() -> Any:  # the helper as the emitted file holds it
    scope = {"torch": torch}
    exec(PY_HELPERS["_k_major"], scope)
    return scope["_k_major"]


@pytest.mark.parametrize("batch", [(), (3,)], ids=["matrix", "batched"])
def test_operands_stored_otherwise_are_copied_k_major(batch: tuple[int, ...]) -> None:
    a = torch.randn(*batch, 45, 300).transpose(-1, -2)  # M x K, unit stride along M
    b = torch.randn(*batch, 45, 270)  # K x N, unit stride along N
    lhs, rhs = k_major()(a, b, min_reuse=256)
    assert lhs.stride(-1) == 1 and rhs.stride(-2) == 1
    assert torch.equal(lhs, a) and torch.equal(rhs, b)


def test_k_major_operands_and_small_products_are_left_as_they_are() -> None:
    a, w = torch.randn(300, 45), torch.randn(270, 45)
    lhs, rhs = k_major()(a, w.T, min_reuse=256)  # a linear layer: both K-major already
    assert lhs is a and rhs.data_ptr() == w.data_ptr()
    a_t, b = torch.randn(45, 100).T, torch.randn(45, 200)  # M, N below min_reuse
    lhs, rhs = k_major()(a_t, b, min_reuse=256)
    assert lhs is a_t and rhs is b


def k_padded() -> Any:
    scope = {"torch": torch}
    exec(PY_HELPERS["_k_padded"], scope)
    return scope["_k_padded"]


@pytest.mark.parametrize("batch", [(), (2,)], ids=["matrix", "batched"])
def test_a_k_off_multiples_of_16_is_padded_with_zeros(batch: tuple[int, ...]) -> None:
    a = torch.randn(*batch, 260, 45)  # M x K, K = 45
    b = torch.randn(*batch, 45, 270).transpose(-1, -2).contiguous().transpose(-1, -2)
    lhs, rhs = k_padded()(a, b, min_reuse=256)
    assert lhs.shape[-1] == rhs.shape[-2] == 48
    assert lhs.stride(-1) == 1 and rhs.stride(-2) == 1  # both K-major
    assert lhs.stride(-2) == 48 and rhs.stride(-1) == 48  # rows start 16 values apart
    assert torch.equal(lhs[..., :45], a) and torch.equal(rhs[..., :45, :], b)
    assert not lhs[..., 45:].any() and not rhs[..., 45:, :].any()
    assert torch.allclose(lhs @ rhs, a @ b, atol=1e-5)


def test_k_multiples_of_16_and_small_products_are_not_padded() -> None:
    a, b = torch.randn(300, 64), torch.randn(64, 270)
    lhs, rhs = k_padded()(a, b, min_reuse=256)
    assert lhs is a and rhs is b
    a, b = torch.randn(300, 45), torch.randn(45, 100)  # N below min_reuse: memory-bound
    lhs, rhs = k_padded()(a, b, min_reuse=256)
    assert lhs is a and rhs is b
