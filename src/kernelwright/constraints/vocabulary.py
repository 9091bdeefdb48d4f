"""The controlled vocabulary: requirement phrases kernelwright turns into clauses without an LLM.

Each :class:`Phrase` is a pattern with an example; a sentence may hold several phrases, and every
clause keeps the words it matched. The table (docs/constraints.md shows the same):

    phrase                                         clause
    "results must be bit-identical run to run"     determinism
    "no more than 96 KB of shared memory"          shared_bytes <= 98304 (tiled-GEMM estimate)
    "tiles multiples of 64"                        P % 64 == 0 for every tile parameter P
    "tiles at most 128"                            P <= 128 for every tile parameter P
    "BLOCK_M a multiple of 64"                     BLOCK_M % 64 == 0
    "at most 8 warps" / "at most 3 stages"         WARPS <= 8 / STAGES <= 3
    "BLOCK_N * STAGES <= 512"                      the expression itself (restriction syntax)
    "any batch size from 1 to 4096"                shape range batch in [1, 4096]
    "bf16 storage, fp32 math"                      precision bf16 (storage bf16, math fp32)
    "no TF32"                                      fp32 math
    "don't use atomics" / "no inline asm"          forbidden construct
    "keep peak extra memory under 1 GB"            memory ceiling 1073741824 bytes
    "only Triton" / "no CUDA" / "only CUDA"        backends
    "never call torch.matmul or torch.bmm"         forbidden ops

Sizes are binary: 1 KB = 1024 bytes, 1 MB = 1024 KB, 1 GB = 1024 MB, as GPU specifications
give shared memory. Tile parameters are the known parameters named ``BLOCK``, ``BLOCK_*``,
``LOOP_BLOCK`` or ``TILE``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kernelwright.constraints.clauses import Clause, Kind
from kernelwright.constraints.properties import ShapeRange
from kernelwright.errors import ConfigError
from kernelwright.tuning.restrictions import Expression

# The shared memory a tiled matrix product stages: STAGES copies of an A and a B block of 4-byte
# values (the estimate the gemm skills' own constraints use).
SHARED_BYTES = ("shared_bytes", "(BLOCK_M * BLOCK_K + BLOCK_K * BLOCK_N) * STAGES * 4")
TILE_NAME = re.compile(r"^(BLOCK(_\w+)?|LOOP_BLOCK|TILE)$")
_UNITS = {"b": 1, "byte": 1, "bytes": 1, "k": 1024, "kb": 1024, "kib": 1024,
          "m": 1024**2, "mb": 1024**2, "mib": 1024**2, "g": 1024**3, "gb": 1024**3,
          "gib": 1024**3}  # fmt: skip
_SIZE = r"(\d+(?:\.\d+)?)\s*(bytes?|[kmg]i?b|[kmg]|b)\b"
_AT_MOST = r"(?:no more than|not more than|at most|up to|under|below|less than|within|<=|<)"
_NEGATION = r"(?:never|don'?t|do not|must not|mustn'?t|no|not|without|avoid|forbid(?:den)?)"
_OP = r"(?:torch|F|nn|tl|np|triton)\.[\w.]*\w"


@dataclass(frozen=True, slots=True)
class Found:
    """A clause and what it adds to the model (one field set)."""

    clause: Clause
    restriction: str | None = None
    derived: tuple[str, str] | None = None
    forbidden_op: str | None = None
    construct: str | None = None
    backends: tuple[str, ...] | None = None
    storage: str | None = None
    math: str | None = None
    deterministic: bool = False
    shape: ShapeRange | None = None
    ceiling: int | None = None


Build = Callable[[re.Match[str], Sequence[str]], list[Found]]


@dataclass(frozen=True, slots=True)
class Phrase:
    """A requirement phrase: its pattern (case-insensitive), an example, and its clauses."""

    name: str
    pattern: re.Pattern[str]
    example: str
    build: Build


def _bytes(number: str, unit: str) -> int:
    return int(float(number) * _UNITS[unit.lower()])


def _determinism(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
    clause = Clause(Kind.DETERMINISM, "bit-identical repeated runs", m.group(0))
    return [Found(clause, deterministic=True)]


def _shared(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
    first = bool(m.group("n1"))
    number, unit = m.group("n1" if first else "n2"), m.group("u1" if first else "u2")
    text = f"shared_bytes <= {_bytes(number, unit)}"
    clause = Clause(Kind.RESTRICTION, text, m.group(0))
    return [Found(clause, restriction=text, derived=SHARED_BYTES)]


def _per_tile(template: str) -> Build:
    def build(m: re.Match[str], tiles: Sequence[str]) -> list[Found]:
        if not tiles:
            raise ConfigError(f"{m.group(0)!r}: no tile parameters are known to restrict")
        texts = [template.format(name=t, n=int(m.group("n"))) for t in tiles]
        return [Found(Clause(Kind.RESTRICTION, t, m.group(0)), restriction=t) for t in texts]

    return build


def _named(template: str, name: str | None = None) -> Build:
    def build(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
        text = template.format(name=name or m.group("name"), n=int(m.group("n")))
        return [Found(Clause(Kind.RESTRICTION, text, m.group(0)), restriction=text)]

    return build


def _expression(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
    text = Expression.parse(m.group(0)).text
    return [Found(Clause(Kind.RESTRICTION, text, m.group(0)), restriction=text)]


def _shape(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
    dim = "batch" if m.group("dim").lower().startswith("batch") else m.group("dim").lower()
    shape = ShapeRange(dim.replace(" ", "_"), int(m.group("lo")), int(m.group("hi")))
    return [Found(Clause(Kind.SHAPE_RANGE, shape.describe(), m.group(0)), shape=shape)]


def _dtype(name: str) -> str:
    return {"bfloat16": "bf16", "float32": "fp32"}.get(name.lower(), name.lower())


def _storage(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
    storage = _dtype(m.group("dtype"))
    clause = Clause(Kind.PRECISION, f"{storage} storage", m.group(0))
    return [Found(clause, storage=storage)]


def _math(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
    math = _dtype(m.group("dtype")) if m.groupdict().get("dtype") else "fp32"
    return [Found(Clause(Kind.PRECISION, f"{math} math", m.group(0)), math=math)]


def _construct(name: str) -> Build:
    def build(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
        return [Found(Clause(Kind.FORBIDDEN_CONSTRUCT, name, m.group(0)), construct=name)]

    return build


def _memory(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
    ceiling = _bytes(m.group("n"), m.group("u"))
    clause = Clause(Kind.MEMORY_CEILING, f"peak extra memory <= {ceiling} bytes", m.group(0))
    return [Found(clause, ceiling=ceiling)]


def _backends(*allowed: str) -> Build:
    def build(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
        clause = Clause(Kind.BACKEND, f"only {', '.join(allowed)}", m.group(0))
        return [Found(clause, backends=allowed)]

    return build


def _ops(m: re.Match[str], _tiles: Sequence[str]) -> list[Found]:
    ops = re.findall(_OP, m.group("ops"))
    return [Found(Clause(Kind.FORBIDDEN_OP, op, m.group(0)), forbidden_op=op) for op in ops]


def _p(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Order matters: a phrase's words are taken out of the sentence before the next phrase looks, so
# "shared memory" is claimed before the general memory ceiling, and both before a bare expression.
VOCABULARY: tuple[Phrase, ...] = (
    Phrase("determinism", _p(
        r"(?:results?\s+(?:must|should)\s+be\s+)?(?:bit[- ]?(?:identical|exact|for[- ]bit)"
        r"|deterministic|reproducible)(?:\s+(?:results?|outputs?))?"
        r"(?:\s+(?:run[- ]to[- ]run|across runs|between runs|every run))?"),
        "results must be bit-identical run to run", _determinism),
    Phrase("shared memory", _p(
        rf"(?:{_AT_MOST}\s+(?P<n1>\d+(?:\.\d+)?)\s*(?P<u1>bytes?|[kmg]i?b|[kmg]|b)\b\s+(?:of\s+)?"
        rf"(?:shared memory|smem))|(?:(?:shared memory|smem)\s+(?:use\s+|usage\s+)?"
        rf"{_AT_MOST}\s+(?P<n2>\d+(?:\.\d+)?)\s*(?P<u2>bytes?|[kmg]i?b|[kmg]|b)\b)"),
        "no more than 96 KB of shared memory", _shared),
    Phrase("named multiple", _p(
        r"\b(?P<name>[A-Z][A-Z0-9]*_[A-Z0-9_]*|BLOCK|TILE|WARPS|STAGES)\b\s+(?:must\s+be\s+|is\s+"
        r"|be\s+)?(?:an?\s+)?multiples?\s+of\s+(?P<n>\d+)"),
        "BLOCK_M a multiple of 64", _named("{name} % {n} == 0")),
    Phrase("tile multiple", _p(
        r"\b(?:tiles?|tile sizes?|blocks?|block sizes?)\b(?:\s+(?:must|should)\s+be)?"
        r"(?:\s+an?)?\s+multiples?\s+of\s+(?P<n>\d+)"),
        "tiles multiples of 64", _per_tile("{name} % {n} == 0")),
    Phrase("tile ceiling", _p(
        rf"\b(?:tiles?|tile sizes?|blocks?|block sizes?)\b(?:\s+(?:must|should)\s+be)?\s+"
        rf"(?:{_AT_MOST}|no (?:larger|bigger) than)\s+(?P<n>\d+)\b(?!\s*(?:[kmg]i?b|bytes))"),
        "tiles at most 128", _per_tile("{name} <= {n}")),
    Phrase("warps", _p(rf"{_AT_MOST}\s+(?P<n>\d+)\s+warps\b"),
           "at most 8 warps", _named("{name} <= {n}", "WARPS")),
    Phrase("stages", _p(rf"{_AT_MOST}\s+(?P<n>\d+)\s+(?:pipeline\s+)?stages\b"),
           "at most 3 stages", _named("{name} <= {n}", "STAGES")),
    Phrase("shape range", _p(
        r"(?:(?:must|should)\s+work\s+for\s+)?(?:any|every|all)?\s*"
        r"(?P<dim>batch(?:[ _]sizes?)?|sequence length|seq_len|rows|columns)\s+"
        r"(?:from|between)\s+(?P<lo>\d+)\s+(?:to|and|through|-)\s+(?P<hi>\d+)"),
        "must work for any batch size from 1 to 4096", _shape),
    Phrase("storage dtype", _p(
        r"\b(?P<dtype>bf16|bfloat16|fp32|float32)\s+(?:storage|inputs|tensors|weights)\b"),
        "bf16 storage", _storage),
    Phrase("math dtype", _p(
        r"\b(?P<dtype>fp32|float32|tf32)\s+(?:math|accumulation|accumulators?|compute)\b"
        r"|\baccumulate\s+in\s+(?P<acc>fp32|float32)\b|\bno\s+tf32\b"),
        "fp32 math", _math),
    Phrase("atomics", _p(rf"\b{_NEGATION}\s+(?:\w+\s+){{0,2}}?atomics?(?:\s+operations)?\b"),
           "don't use atomics", _construct("atomics")),
    Phrase("inline asm", _p(rf"\b{_NEGATION}\s+(?:\w+\s+){{0,2}}?inline\s+(?:asm|assembly)\b"),
           "no inline asm", _construct("inline_asm")),
    Phrase("memory ceiling", _p(
        rf"(?:keep\s+)?(?:(?:peak|extra|additional|workspace|scratch)\s+)*memory(?:\s+use)?\s+"
        rf"{_AT_MOST}\s+(?P<n>\d+(?:\.\d+)?)\s*(?P<u>bytes?|[kmg]i?b|[kmg]|b)\b"),
        "keep peak extra memory under 1 GB", _memory),
    Phrase("expression", _p(
        r"\b[A-Za-z_]\w*(?:\s*[%*+/-]\s*\w+)*\s*(?:<=|>=|==|!=|<|>)\s*\d+(?:\s*[*+/-]\s*\d+)*"),
        "BLOCK_N * STAGES <= 512", _expression),
    Phrase("only triton", _p(r"\bonly\s+(?:use\s+)?triton\b|\btriton\s+only\b|"
                             rf"\b{_NEGATION}\s+(?:use\s+)?cuda\b"),
           "only Triton", _backends("triton")),
    Phrase("only cuda", _p(r"\bonly\s+(?:use\s+)?cuda\b|\bcuda\s+only\b"),
           "only CUDA", _backends("cuda")),
    Phrase("forbidden ops", _p(
        rf"\b{_NEGATION}\s+(?:(?:call|use|calling|using|invoke)\s+)?"
        rf"(?P<ops>{_OP}(?:\s*(?:,|or|and|nor)\s*{_OP})*)"),
        "never call torch.matmul", _ops),
)
