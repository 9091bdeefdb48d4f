"""Words outside the vocabulary, restated by a (scripted) LLM and checked by the vocabulary."""

import pytest

from agent_doubles import ScriptedChatModel
from kernelwright.constraints.clauses import Kind
from kernelwright.constraints.restate import formulate_with_llm

DOMAINS = {"BLOCK_M": (16, 32, 64, 128), "WARPS": (1, 2, 4, 8)}
TEXT = "No atomics. Make tiles 64-aligned. Stick with Triton kernels. Big tiles please."


def test_restatements_add_checked_clauses_traced_to_the_words():
    model = ScriptedChatModel([
        "1: BLOCK_M a multiple of 64\n"
        "1: 0 == BLOCK_M % 64\n"  # the same formula: one formulation
        "2: only Triton\n"
        "3: keep BLOCK_M >= 32\n"
        "3: keep BLOCK_M >= 64\n"  # two readings: the model's first is taken, the other named
        "9: never call torch.matmul"  # no such fragment: ignored
    ])
    found = formulate_with_llm(TEXT, model, DOMAINS)
    assert [(c.kind, c.formal, c.words) for c in found.clauses] == [
        (Kind.FORBIDDEN_CONSTRUCT, "atomics", "No atomics"),
        (Kind.RESTRICTION, "BLOCK_M % 64 == 0",
         "Make tiles 64-aligned (restated: BLOCK_M a multiple of 64)"),
        (Kind.BACKEND, "only triton", "Stick with Triton kernels (restated: only Triton)"),
        (Kind.RESTRICTION, "BLOCK_M >= 32", "Big tiles please (restated: keep BLOCK_M >= 32)"),
    ]  # fmt: skip
    assert found.unrecognised == ()
    assert (
        "read 'Big tiles please' as 'keep BLOCK_M >= 32' (also possible: 'keep BLOCK_M >= 64'): "
        "edit the model to take another reading"
    ) in found.warnings
    assert found.ok and found.constraints is not None
    assert found.constraints.backends == ("triton",)
    (system, user) = model.requests[0]
    assert '"tiles multiples of 64"' in system.content and "BLOCK_M, WARPS" in system.content
    assert user.content == (
        "1: Make tiles 64-aligned\n2: Stick with Triton kernels\n3: Big tiles please"
    )


@pytest.mark.parametrize(
    "reply",
    [
        "1: make it pretty",  # not understood by the vocabulary either
        "1: BLOCK_M <= 32 and BLOCK_M % 64 == 0",  # conflicts in itself
        "Sure! Here you go.",  # not in the answer format
    ],
)
def test_restatements_the_vocabulary_cannot_check_are_dropped(reply):
    found = formulate_with_llm("Make it fast.", ScriptedChatModel([reply]), DOMAINS)
    assert found.clauses == () and found.unrecognised == ("Make it fast",)


def test_no_call_is_made_when_the_vocabulary_understands_everything():
    model = ScriptedChatModel([])
    found = formulate_with_llm("don't use atomics", model, DOMAINS)
    assert [c.formal for c in found.clauses] == ["atomics"] and model.requests == []


def test_the_reading_that_fits_the_rest_is_taken_even_when_the_model_ranked_it_second():
    # BLOCK_M <= 32 cannot hold with 64-aligned tiles over 16..128: the search takes the second
    model = ScriptedChatModel(["1: keep BLOCK_M <= 32\n1: keep BLOCK_M <= 128"])
    found = formulate_with_llm("tiles multiples of 64. Small tiles.", model, DOMAINS)
    assert found.ok and not found.conflicts and found.unrecognised == ()
    assert [c.formal for c in found.clauses] == ["BLOCK_M % 64 == 0", "BLOCK_M <= 128"]
    assert any("also possible: 'keep BLOCK_M <= 32'" in w for w in found.warnings)


def test_a_fragment_no_reading_fits_is_left_to_the_person():
    model = ScriptedChatModel(["1: keep BLOCK_M <= 32"])
    found = formulate_with_llm("tiles multiples of 64. Small tiles.", model, DOMAINS)
    assert found.ok and found.unrecognised == ("Small tiles",)
    assert [c.formal for c in found.clauses] == ["BLOCK_M % 64 == 0"]


def test_readings_the_solver_proves_equal_are_one():
    from kernelwright.constraints.formulate import read
    from kernelwright.constraints.search import meaning_key

    # over 16, 32, 64, 128: `>= 64` and `> 32` admit the same tiles; `>= 32` does not
    keys = {text: meaning_key(read(text, DOMAINS)[0], DOMAINS)
            for text in ("keep BLOCK_M >= 64", "keep BLOCK_M > 32", "keep BLOCK_M >= 32")}
    assert keys["keep BLOCK_M >= 64"] == keys["keep BLOCK_M > 32"] != keys["keep BLOCK_M >= 32"]
    model = ScriptedChatModel(["1: keep BLOCK_M >= 64\n1: keep BLOCK_M > 32"])
    found = formulate_with_llm("Big tiles please.", model, DOMAINS)
    assert [c.formal for c in found.clauses] == ["BLOCK_M >= 64"]
    assert not any("also possible" in w for w in found.warnings)  # one reading, not two
