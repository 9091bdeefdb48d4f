"""The dtypes a group's facts carry follow the run's precision policy."""

from __future__ import annotations

import pytest

from kernelwright.design.facts import policy_dtypes


def test_policy_dtypes_store_32_bit_floats_as_the_policy_does() -> None:
    assert policy_dtypes(("float32", "int64"), "bf16") == ("bfloat16", "int64")
    assert policy_dtypes(("bfloat16", "float32"), "bf16") == ("bfloat16",)
    assert policy_dtypes(("float32",), "tf32") == ("float32",)
    # the bf16 policy casts every floating tensor; the others keep the captured dtypes
    assert policy_dtypes(("float16", "float64"), "bf16") == ("bfloat16",)
    assert policy_dtypes(("float16", "float64"), "fp32") == ("float16", "float64")
    with pytest.raises(ValueError, match="precision 'fp8'"):
        policy_dtypes(("float32",), "fp8")
