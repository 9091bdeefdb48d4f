"""Properties of a candidate's behaviour that a person requires, and the precision policy.

    Properties      determinism (bit-identical repeated runs), shape ranges (a dimension's
                    extent that must work), a ceiling on peak extra memory
    DtypePolicy     storage and math dtypes; each supported pair is one run policy

Determinism is checked by the harness (``EvalOptions.determinism``: a correct candidate runs twice
more on the same inputs, and outputs that differ bit for bit refuse it), and so are shape ranges
(``EvalOptions.shape_ranges``: the candidate is also checked with the task's size constant set to
each end of the range), and so is the memory ceiling on a GPU (``EvalOptions.
memory_ceiling_bytes``: each checked call's peak allocation beyond its inputs, parameters and
outputs, measured in the candidate's process; on the CPU the verdict says it was not checked).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelwright.errors import ConfigError
from kernelwright.records import Precision

# (storage, math) -> the run's precision policy. bf16 storage always accumulates in fp32.
_POLICIES: dict[tuple[str, str], Precision] = {
    ("fp32", "fp32"): Precision.FP32,
    ("fp32", "tf32"): Precision.TF32,
    ("bf16", "fp32"): Precision.BF16,
}
DTYPES = ("fp32", "tf32", "bf16")


@dataclass(frozen=True, slots=True)
class ShapeRange:
    """A dimension the candidate must handle over ``[low, high]`` (``batch`` from 1 to 4096)."""

    dim: str
    low: int
    high: int

    def __post_init__(self) -> None:
        if not 0 < self.low <= self.high:
            raise ConfigError(
                f"shape range {self.dim}: need 0 < low <= high, got {self.low}..{self.high}"
            )

    def describe(self) -> str:
        """``batch in [1, 4096]``."""
        return f"{self.dim} in [{self.low}, {self.high}]"


@dataclass(frozen=True, slots=True)
class Properties:
    """What a candidate must do when it runs, beyond matching the reference."""

    deterministic: bool = False
    shape_ranges: tuple[ShapeRange, ...] = ()
    memory_ceiling_bytes: int | None = None

    def __bool__(self) -> bool:
        return (
            self.deterministic or bool(self.shape_ranges) or self.memory_ceiling_bytes is not None
        )

    def describe(self) -> list[str]:
        """One line per property, each saying how it is checked (or that it is not yet)."""
        lines = []
        if self.deterministic:
            lines.append("Results bit-identical run to run (two repeated runs compared).")
        lines += [f"Works for {r.describe()} (checked at both ends)." for r in self.shape_ranges]
        if self.memory_ceiling_bytes is not None:
            lines.append(
                f"Peak extra memory at most {self.memory_ceiling_bytes} bytes (measured on a GPU)."
            )
        return lines


@dataclass(frozen=True, slots=True)
class DtypePolicy:
    """Storage and math dtypes (``bf16`` storage, ``fp32`` math)."""

    storage: str
    math: str

    @property
    def precision(self) -> Precision:
        """The run policy with these dtypes.

        Raises:
            ConfigError: a pair kernelwright has no policy for.
        """
        policy = _POLICIES.get((self.storage, self.math))
        if policy is None:
            pairs = ", ".join(f"{s} storage with {m} math" for s, m in _POLICIES)
            raise ConfigError(
                f"{self.storage} storage with {self.math} math is not a policy kernelwright "
                f"runs; supported: {pairs}"
            )
        return policy
