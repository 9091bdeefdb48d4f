"""The elements the judge copies when a timed batch returns (on a GPU), checked against the
outputs as they end (which are compared with the reference in full): a scalar output, a vector
and a transposed view are all sampled where they are, and a value that changed after the call
returned is reported as late, while rounding the tolerance's widening admits is not."""

import pytest
import torch

from kernelwright.evaluate.clock import _late, _sample


@pytest.mark.parametrize("out", [torch.tensor(3.0), torch.randn(7), torch.randn(4, 5).t()],
                         ids=["scalar", "vector", "transposed"])
def test_sampled_elements_are_compared_where_the_outputs_have_them(out):
    idx, values = _sample(out)
    assert _late([(idx, values)], [out.clone()]) == ""
    assert "finished later" in _late([(idx, values)], [out + 1])


def test_a_value_that_changes_after_return_is_late_however_small_the_change():
    out = torch.zeros(1000)
    idx, values = _sample(out)
    out[idx[0]] = 1e-7  # written after the judge's copy: late, even within any tolerance
    message = _late([(idx, values)], [out])
    assert "changed afterwards" in message and "finished later" in message


def test_nan_that_stays_nan_is_not_late_and_outputs_without_a_sample_are_skipped():
    out = torch.full((64,), float("nan"))
    idx, values = _sample(out)
    assert _late([(idx, values), None], [out, torch.ones(3)]) == ""
    ints = torch.arange(10)
    assert _late([_sample(ints)], [ints.clone()]) == ""


def test_a_conjugated_view_is_sampled_as_its_values():
    out = torch.randn(6, 5, dtype=torch.complex64).conj()
    assert out.is_conj()
    assert _late([_sample(out)], [out.resolve_conj()]) == ""
