"""Requirement sentences -> formal models, through the controlled vocabulary (no LLM)."""

import pytest

from kernelwright.constraints.clauses import Kind
from kernelwright.constraints.formulate import formulate
from kernelwright.constraints.vocabulary import VOCABULARY
from kernelwright.errors import ConfigError
from kernelwright.records import Precision

# A small library's parameters: the tile parameters are BLOCK_M, BLOCK_N, BLOCK_K.
DOMAINS = {
    "BLOCK_M": (16, 32, 64, 128, 256),
    "BLOCK_N": (16, 32, 64, 128, 256),
    "BLOCK_K": (16, 32, 64, 128),
    "STAGES": (2, 3, 4, 5),
    "WARPS": (1, 2, 4, 8, 16),
}
R, OP, CON, BE, PREC = (
    Kind.RESTRICTION, Kind.FORBIDDEN_OP, Kind.FORBIDDEN_CONSTRUCT, Kind.BACKEND, Kind.PRECISION,
)  # fmt: skip
DET, SHAPE, MEM = Kind.DETERMINISM, Kind.SHAPE_RANGE, Kind.MEMORY_CEILING
TILES_64 = [(R, "BLOCK_K % 64 == 0"), (R, "BLOCK_M % 64 == 0"), (R, "BLOCK_N % 64 == 0")]

# (requirement text, expected clauses as (kind, formal), expected unrecognised fragments)
CASES = [
    ("results must be bit-identical run to run", [(DET, "bit-identical repeated runs")], []),
    ("Outputs must be deterministic.", [(DET, "bit-identical repeated runs")], []),
    ("reproducible results every run", [(DET, "bit-identical repeated runs")], []),
    ("no more than 96 KB of shared memory", [(R, "shared_bytes <= 98304")], []),
    ("shared memory under 64KB", [(R, "shared_bytes <= 65536")], []),
    ("at most 100 KiB of smem", [(R, "shared_bytes <= 102400")], []),
    ("tiles multiples of 64", TILES_64, []),
    ("Block sizes must be multiples of 64", TILES_64, []),
    ("tiles at most 128", [(R, f"{t} <= 128") for t in ("BLOCK_K", "BLOCK_M", "BLOCK_N")], []),
    ("BLOCK_M a multiple of 32", [(R, "BLOCK_M % 32 == 0")], []),
    ("BLOCK_N must be a multiple of 16", [(R, "BLOCK_N % 16 == 0")], []),
    ("at most 8 warps", [(R, "WARPS <= 8")], []),
    ("no more than 3 pipeline stages", [(R, "STAGES <= 3")], []),
    ("BLOCK_N * STAGES <= 512", [(R, "BLOCK_N * STAGES <= 512")], []),
    ("keep BLOCK_M >= 32", [(R, "BLOCK_M >= 32")], []),
    ("must work for any batch size from 1 to 4096", [(SHAPE, "batch in [1, 4096]")], []),
    (
        "should work for sequence length between 128 and 8192",
        [(SHAPE, "sequence_length in [128, 8192]")],
        [],
    ),
    ("bf16 storage, fp32 math", [(PREC, "bf16 storage"), (PREC, "fp32 math")], []),
    ("fp32 inputs and no TF32", [(PREC, "fp32 storage"), (PREC, "fp32 math")], []),
    ("tf32 math", [(PREC, "tf32 math")], []),
    ("accumulate in fp32", [(PREC, "fp32 math")], []),
    ("don't use atomics", [(CON, "atomics")], []),
    ("No atomic operations.", [(CON, "atomics")], []),
    ("never use inline assembly", [(CON, "inline_asm")], []),
    ("keep peak extra memory under 1 GB", [(MEM, "peak extra memory <= 1073741824 bytes")], []),
    ("extra memory at most 512 MB", [(MEM, "peak extra memory <= 536870912 bytes")], []),
    ("only Triton", [(BE, "only triton")], []),
    ("no CUDA", [(BE, "only triton")], []),
    ("only CUDA", [(BE, "only cuda")], []),
    ("never call torch.matmul", [(OP, "torch.matmul")], []),
    ("do not use torch.bmm or F.linear", [(OP, "torch.bmm"), (OP, "F.linear")], []),
    ("make it fast", [], ["make it fast"]),
    ("don't use atomics and make it pretty", [(CON, "atomics")], ["make it pretty"]),
    (
        "Deterministic. No atomics; only Triton.\nNever call torch.matmul.",
        [(DET, "bit-identical repeated runs"), (CON, "atomics"), (BE, "only triton"),
         (OP, "torch.matmul")],
        [],
    ),  # fmt: skip
]


@pytest.mark.parametrize(("text", "clauses", "unrecognised"), CASES, ids=[c[0][:40] for c in CASES])
def test_requirement_texts_become_their_formal_models(text, clauses, unrecognised):
    model = formulate(text, DOMAINS)
    assert [(c.kind, c.formal) for c in model.clauses] == clauses
    assert list(model.unrecognised) == unrecognised
    assert all(c.words and c.words.lower() in text.lower() for c in model.clauses)


def test_there_are_at_least_thirty_texts():
    assert len(CASES) >= 30


def test_every_documented_example_formulates_into_a_clause():
    for phrase in VOCABULARY:
        model = formulate(phrase.example, DOMAINS)
        assert model.clauses and not model.unrecognised, phrase.name


def test_the_model_holds_every_clause_and_marks_properties_not_enforced():
    text = (
        "Results must be bit-identical run to run. No more than 96 KB of shared memory. "
        "Tiles multiples of 64. Must work for any batch size from 1 to 4096. "
        "bf16 storage, fp32 math. Don't use atomics. Keep peak extra memory under 1 GB. "
        "Only Triton. Never call torch.matmul."
    )
    model = formulate(text, DOMAINS)
    rules = model.constraints
    assert model.ok and rules is not None
    assert rules.precision is Precision.BF16 and rules.backends == ("triton",)
    assert rules.forbidden_ops == ("torch.matmul",) and rules.forbidden_constructs == ("atomics",)
    assert rules.space.restrictions[0] == "shared_bytes <= 98304"
    assert dict(rules.space.derived)["shared_bytes"].startswith("(BLOCK_M * BLOCK_K")
    props = rules.properties
    assert props.deterministic and props.memory_ceiling_bytes == 2**30
    assert [r.describe() for r in props.shape_ranges] == ["batch in [1, 4096]"]
    checked_by = {c.kind: c.checked_by for c in model.clauses}
    assert checked_by[SHAPE] == "extra shapes" and checked_by[MEM] == "peak memory (GPU)"
    assert props.describe()[-1].endswith("(measured on a GPU).")


@pytest.mark.parametrize(
    ("text", "conflict"),
    [
        ("BLOCK_M <= 32. BLOCK_M a multiple of 64.", "`BLOCK_M <= 32` and `BLOCK_M % 64 == 0`"),
        ("only Triton. only CUDA.", "leave no kernel language allowed"),
        ("bf16 storage. fp32 storage.", "different storage dtypes"),
        ("bf16 storage with tf32 math", "bf16 storage with tf32 math is not a policy"),
    ],
)
def test_conflicting_requirements_give_no_model(text, conflict):
    model = formulate(text, DOMAINS)
    assert not model.ok and model.constraints is None
    assert any(conflict in line for line in model.conflicts), model.conflicts


def test_redundant_requirements_are_reported_and_the_model_kept():
    model = formulate("BLOCK_M a multiple of 64. BLOCK_M a multiple of 128.", DOMAINS)
    assert model.ok
    assert model.warnings[0] == "redundant: `BLOCK_M % 64 == 0` (implied by `BLOCK_M % 128 == 0`)"
    model = formulate("memory under 1 GB. memory under 2 GB.", DOMAINS)
    assert model.constraints is not None
    assert model.constraints.properties.memory_ceiling_bytes == 2**30
    assert model.warnings == ("redundant: 'memory under 2 GB' (implied by 'memory under 1 GB')",)


def test_words_add_to_a_base_file():
    from kernelwright.constraints import Constraints

    base = Constraints(forbidden_ops=("torch.add",), candidates=3)
    model = formulate("never call torch.matmul", DOMAINS, base=base)
    assert model.constraints is not None
    assert model.constraints.forbidden_ops == ("torch.add", "torch.matmul")
    assert model.constraints.candidates == 3


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_text_is_an_error(text):
    with pytest.raises(ConfigError, match="no requirements given"):
        formulate(text, DOMAINS)


def test_tiles_with_no_tile_parameter_known_is_an_error():
    with pytest.raises(ConfigError, match="no tile parameters"):
        formulate("tiles multiples of 64", {"WARPS": (4, 8)})
