"""The observer's fingerprint of a tensor is computed in float64 chunks, never a whole copy."""

import pytest
import torch

from kernelwright.evaluate.guard import observer


def _whole(t: torch.Tensor) -> tuple[float, ...]:
    x = t.reshape(-1).double()
    n = x.numel()
    idx = torch.arange(min(16, n)) * (n - 1) // max(min(16, n) - 1, 1)
    return (float(x.sum()), float((x * x).sum()), *[float(v) for v in x[idx].tolist()])


@pytest.mark.parametrize("n", [1, 7, 64, 1000, 1003])
def test_chunked_fingerprint_equals_the_whole_tensors(monkeypatch, n):
    monkeypatch.setattr(observer, "_PRINT_CHUNK", 64)  # many chunks, the last one partial
    t = torch.randn(n, dtype=torch.float32)
    assert observer.same_print(observer.fingerprint(t), _whole(t))


def test_chunked_fingerprint_tells_a_changed_value(monkeypatch):
    monkeypatch.setattr(observer, "_PRINT_CHUNK", 64)
    t = torch.randn(4, 250)
    before = observer.fingerprint(t)
    t[3, 200] += 1.0  # in the last chunk, at no sampled position
    assert not observer.same_print(before, observer.fingerprint(t))


def test_chunks_are_bounded(monkeypatch):
    """No float64 conversion is larger than a chunk."""
    seen = []
    real = torch.Tensor.double

    def double(self):
        seen.append(self.numel())
        return real(self)

    monkeypatch.setattr(observer, "_PRINT_CHUNK", 100)
    monkeypatch.setattr(torch.Tensor, "double", double)
    observer.fingerprint(torch.randn(1050))
    assert seen and max(seen) <= 100
