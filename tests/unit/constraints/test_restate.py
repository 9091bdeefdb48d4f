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
        "3: keep BLOCK_M >= 64\n"  # two readings: the person chooses
        "9: never call torch.matmul"  # no such fragment: ignored
    ])
    found = formulate_with_llm(TEXT, model, DOMAINS)
    assert [(c.kind, c.formal, c.words) for c in found.clauses] == [
        (Kind.FORBIDDEN_CONSTRUCT, "atomics", "No atomics"),
        (Kind.RESTRICTION, "BLOCK_M % 64 == 0",
         "Make tiles 64-aligned (restated: BLOCK_M a multiple of 64)"),
        (Kind.BACKEND, "only triton", "Stick with Triton kernels (restated: only Triton)"),
    ]  # fmt: skip
    assert found.unrecognised == ("Big tiles please",)
    assert found.warnings[-1] == (
        "ambiguous: 'Big tiles please' could be 'keep BLOCK_M >= 32' or 'keep BLOCK_M >= 64'"
    )
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
