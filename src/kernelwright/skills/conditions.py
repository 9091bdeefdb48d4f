"""Conditions: named predicates on a fusion group's facts, each returning Ok or Fail with a reason.

A skill file names them (``check = "reduced_length_at_most"``, ``limit = 16384``); the registry
refuses duplicates and an unknown name says which ones exist. The conditions every family may
use (group kind, where the reduced dimensions lie, extents, dtypes) are here; each kernel family
registers its own next to its skills (``kernelwright/design/families/<family>/conditions.py``).
Facts are measured at the size the design is for (the task's shapes on that device), so "row fits
in one block" is decided for the shapes that will run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kernelwright.errors import ConfigError
from kernelwright.skills.base import Condition, Fail, Ok, Outcome

# bytes of a value of each floating storage dtype (the names facts carry)
FLOAT_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


@dataclass(frozen=True, slots=True)
class GemmShape:
    """A matrix product's shape and operand layouts at the design's size.

    Attributes:
        m, n, k: the product is (batch x) m x k times k x n.
        batch: independent products (1 for ``mm``).
        lhs_k_contiguous, rhs_k_contiguous: each operand's K stride is 1 (else the other
            dimension is the contiguous one: a transposed operand).
        tma_aligned: both operands have a unit stride and 16-byte aligned other strides at
            capture, or the wrapper copies them with K padded to a multiple of 16 (a K that is
            none, M and N both 256 or more), so tensor-memory-accelerator descriptors can load
            them (the wrapper checks again on the runtime tensors, whose dtype the policy may
            have changed).
        epilogue: the element-wise operations applied to the product before it is stored.
        groups: a convolution's groups: each of the n output channels reads its group's
            share of the input channels, so k counts one group's taps (1 for a product).
        transposed: a transposed convolution (k counts the taps of one output phase).
        dilated: a convolution whose taps are spaced (a dilation above 1).
        strided: a convolution whose output positions step by more than one input position
            (a stride above 1: its patches are no boxes of the input, so no TMA loads).
        spatial: a convolution's spatial dimensions (2 or 3).
        channels: a convolution's input channels a group (0 for a product): a channels-last
            step of K reads one tap's channels, so a block of K holds at most this many.
        input_elements: a convolution's input values (0 for a product): a channels-last copy
            moves each once, against the M x K x groups patch values the product reads.
    """

    m: int
    n: int
    k: int
    batch: int = 1
    lhs_k_contiguous: bool = True
    rhs_k_contiguous: bool = False
    tma_aligned: bool = False
    epilogue: tuple[str, ...] = ()
    groups: int = 1
    transposed: bool = False
    dilated: bool = False
    strided: bool = False
    spatial: int = 2
    channels: int = 0
    input_elements: int = 0

    @property
    def flops(self) -> int:
        """Multiply-adds times two."""
        return 2 * self.batch * self.m * self.n * self.k


@dataclass(frozen=True, slots=True)
class AttentionShape:
    """A scaled-dot-product attention's shape and options at the design's size.

    Attributes:
        batch, heads: the query's ``(batch, heads)`` (``kv_heads`` for the key and value).
        m, n: query and key positions (sequence lengths).
        d, dv: the query/key and the value head dims.
        kv_heads: key/value heads; fewer than ``heads`` under grouped-query attention.
        causal: ``is_causal`` (query i sees keys 0..i).
        mask: ``""`` (none), ``"bool"`` (True: attend) or ``"additive"`` (added to the scores);
            ``"other: ..."`` for one the template cannot read.
        dropout: ``dropout_p`` (0 in inference).
        operands: why the operands' shapes do not fit ``(B, H, M, D)``, ``(B, Hk, N, D)``,
            ``(B, Hk, N, Dv)`` with ``Hk`` dividing ``H``; empty when they do.
    """

    batch: int
    heads: int
    m: int
    n: int
    d: int
    dv: int
    kv_heads: int
    causal: bool = False
    mask: str = ""
    dropout: float = 0.0
    operands: str = ""

    @property
    def flops(self) -> int:
        """Multiply-adds of Q K^T and P V times two (every block, causal or not)."""
        return 2 * self.batch * self.heads * self.m * self.n * (self.d + self.dv)


@dataclass(frozen=True, slots=True)
class PoolShape:
    """A pooling's window, per pooled dimension (outermost first, W last).

    Attributes:
        kernel, stride, dilation: the window's taps, the step between windows and between taps.
    """

    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GroupFacts:
    """What the skills' conditions may look at, for one fusion group at one size.

    Attributes:
        kind: the group's kind (its family's: pointwise, reduction, scan, pool, select, gemm).
        schedule: row (reduced/scanned dims innermost) or column (contiguous dims follow);
            empty for pointwise and pool.
        domain: the domain's sizes.
        reduced_length: elements reduced (or scanned) per output position.
        parallel_length: output positions (product of the other dimensions).
        inner_length: contiguous positions after the reduced dims (column schedule); for
            pointwise groups the contiguous run every operand shares; else 1.
        n_passes: sweeps of a row a looped kernel needs without folding.
        folded_passes: sweeps of a row a looped kernel needs with the folds that apply.
        online_pattern: a sum of exp(x - max(x)) can be folded into the max's pass.
        welford_pattern: a variance after a mean can be folded into the mean's pass.
        splittable: one pass, no full-size outputs, no gathers (two-stage split applies).
        flat: every operand is contiguous over the whole domain (no broadcasting).
        reverse: the scan runs from the end.
        dtypes: the storage dtypes the group reads (under the run's precision policy).
        precision: the run's precision policy (fp32, tf32 or bf16): under tf32, 32-bit
            operands may multiply as TF32.
        device: cuda or cpu.
        sm_count: streaming multiprocessors of the target GPU.
        window: pooling window elements (kernel volume); 0 otherwise.
        has_gather: the group gathers along the reduced dimension.
        k: elements a selection (top-k) keeps per row; 0 otherwise.
        indexed: a reduction keeps an index with its value (argmax, argmin).
        stats_then_write: with the folds, one sweep computes every statistic and a second
            writes the full-size outputs (a normalisation), so the sweeps can be relayed.
        full_outputs: the group writes a value along the reduced dimensions (a softmax, a
            norm); False when it writes only per-row results (a loss's terms, a maximum).
        gemm: a GEMM group's product (None for other kinds).
        attention: an attention group's shape and options (None for other kinds).
        pool: a pooling group's window (None for other kinds).
    """

    kind: str
    schedule: str = ""
    domain: tuple[int, ...] = ()
    reduced_length: int = 1
    parallel_length: int = 1
    inner_length: int = 1
    n_passes: int = 1
    folded_passes: int = 1
    online_pattern: bool = False
    welford_pattern: bool = False
    splittable: bool = False
    flat: bool = True
    reverse: bool = False
    dtypes: tuple[str, ...] = ()
    precision: str = "fp32"
    device: str = "cuda"
    sm_count: int = 132
    window: int = 0
    has_gather: bool = False
    k: int = 0
    indexed: bool = False
    stats_then_write: bool = False
    full_outputs: bool = True
    gemm: GemmShape | None = None
    attention: AttentionShape | None = None
    pool: PoolShape | None = None

    @property
    def numel(self) -> int:
        """Elements of the domain."""
        n = 1
        for s in self.domain:
            n *= s
        return n

    def constraint_names(self) -> dict[str, int]:
        """The group quantities a skill's constraints may name beside its parameters (a
        constraint over them holds at this group's shapes only): ``NUMEL``, ``REDUCED``,
        ``POSITIONS`` (output positions), ``INNER``, ``SMS``, ``ITEM`` (bytes of the widest
        floating value the group reads, under the run's policy), for attention ``HEAD_DIM``
        (the wider of the two head dims as the kernels pad it: a power of two, at least 16)
        and for a convolution ``SPATIAL`` (its spatial dimensions, 2 or 3)."""
        names = {"NUMEL": self.numel, "REDUCED": self.reduced_length,
                 "POSITIONS": self.parallel_length, "INNER": self.inner_length,
                 "SMS": self.sm_count, "ITEM": self.float_item_bytes}
        if self.kind == "conv" and self.gemm is not None:
            names["SPATIAL"] = self.gemm.spatial
        if self.attention is not None:
            widest = max(16, self.attention.d, self.attention.dv)
            names["HEAD_DIM"] = 1 << (widest - 1).bit_length()
        return names

    @property
    def float_item_bytes(self) -> int:
        """Bytes of the widest floating dtype the group reads (4 when it reads none)."""
        sizes = [FLOAT_BYTES[d] for d in self.dtypes if d in FLOAT_BYTES]
        return max(sizes, default=4)


Check = Callable[..., Outcome]
CONDITIONS: dict[str, Check] = {}


def condition(name: str) -> Callable[[Check], Check]:
    """Register a condition under ``name`` (duplicates are refused)."""

    def deco(fn: Check) -> Check:
        if name in CONDITIONS:
            raise ConfigError(f"condition {name!r} is already registered")
        CONDITIONS[name] = fn
        return fn

    return deco


def check(cond: Condition, facts: GroupFacts) -> Outcome:
    """Run a condition on ``facts``.

    Raises:
        ConfigError: the condition's name is not registered (the message lists the known ones).
    """
    fn = CONDITIONS.get(cond.check) or _builtin().get(cond.check)
    if fn is None:
        known = ", ".join(sorted(CONDITIONS))
        raise ConfigError(
            f"unknown condition {cond.check!r}; known: {known} (register new ones with "
            "@kernelwright.skills.conditions.condition)"
        )
    return fn(facts, **dict(cond.args))


def _builtin() -> dict[str, Check]:
    """The registry with every kernel family's conditions (importing the families registers
    them, once)."""
    import kernelwright.design.families  # noqa: F401

    return CONDITIONS


def check_all(conds: tuple[Condition, ...], facts: GroupFacts) -> list[Outcome]:
    """Every condition's outcome, in order."""
    return [check(c, facts) for c in conds]


@condition("kind_is")
def kind_is(f: GroupFacts, kind: str) -> Outcome:
    return Ok(f"a {kind} group") if f.kind == kind else Fail(f"a {f.kind} group, not {kind}")


@condition("reduced_innermost")
def reduced_innermost(f: GroupFacts) -> Outcome:
    if f.schedule == "row":
        return Ok("reduced dimensions are innermost (contiguous) -> vectorised row loads")
    return Fail("contiguous dimensions follow the reduced ones (a column reduction)")


@condition("contiguous_after_reduced")
def contiguous_after_reduced(f: GroupFacts) -> Outcome:
    if f.schedule == "column":
        return Ok(
            f"{f.inner_length} contiguous positions follow the reduced dims -> load across them"
        )
    return Fail("the reduced dimensions are innermost")


@condition("reduced_length_at_most")
def reduced_length_at_most(f: GroupFacts, limit: int) -> Outcome:
    if f.reduced_length <= limit:
        return Ok(f"reduced extent {f.reduced_length} <= {limit}: fits in one block")
    return Fail(f"reduced extent {f.reduced_length} > max block {limit}")


@condition("reduced_length_at_least")
def reduced_length_at_least(f: GroupFacts, limit: int) -> Outcome:
    if f.reduced_length >= limit:
        return Ok(f"reduced extent {f.reduced_length} >= {limit}")
    return Fail(f"reduced extent {f.reduced_length} < {limit}: too short to pay off")


@condition("few_outputs")
def few_outputs(f: GroupFacts, per_sm: int = 64) -> Outcome:
    limit = per_sm * f.sm_count
    if f.parallel_length <= limit:
        return Ok(
            f"{f.parallel_length} output positions <= {limit}: too few programs without a split"
        )
    return Fail(f"{f.parallel_length} output positions > {limit}: enough parallel work already")


@condition("float_inputs")
def float_inputs(f: GroupFacts) -> Outcome:
    floats = [d for d in f.dtypes if d.startswith(("float", "bfloat"))]
    if floats:
        return Ok(f"floating inputs ({', '.join(sorted(set(floats)))}) computed in fp32")
    return Fail("no floating input")


@condition("numel_at_least")
def numel_at_least(f: GroupFacts, limit: int) -> Outcome:
    if f.numel >= limit:
        return Ok(f"{f.numel} elements >= {limit}")
    return Fail(f"{f.numel} elements < {limit}")


def describe_facts(f: GroupFacts) -> Mapping[str, Any]:
    """The facts as a dict (for reports); a GEMM's product only where there is one."""
    facts = {k: getattr(f, k) for k in f.__dataclass_fields__}
    if f.gemm is None:
        del facts["gemm"]
    return facts
