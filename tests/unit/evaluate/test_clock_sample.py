"""The elements the judge copies when a timed batch returns (on a GPU), checked against the
expected outputs: a scalar output, a vector and a transposed view are all sampled where the
reference has them, and a value that is not yet the answer is reported as late."""

import pytest
import torch

from kernelwright.evaluate.clock import _late, _sample
from kernelwright.evaluate.reference import Expected
from kernelwright.records import Tolerance

TOL = Tolerance(1e-4, 1e-4)


@pytest.mark.parametrize("out", [torch.tensor(3.0), torch.randn(7), torch.randn(4, 5).t()],
                         ids=["scalar", "vector", "transposed"])
def test_sampled_elements_are_compared_where_the_reference_has_them(out):
    idx, values = _sample(out)
    assert _late(Expected([out.clone()]), [(idx, values)], TOL) == ""
    assert "finished later" in _late(Expected([out + 1]), [(idx, values)], TOL)
