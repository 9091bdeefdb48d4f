"""The decode variant under the interpreter against torch's SDPA in float64: one query or a few
a head, keys split over programs and merged (and not), causal rows, grouped-query heads,
boolean and additive masks with a row masked out, strided operands, head dims past the flash
template's 128, bf16; and the skill's place among the attention skills."""

from __future__ import annotations

import pytest
from test_attention_kernels import qkv, sdpa_task

# 16-key blocks and few programs: N = 150 keys of one row make 3 splits of 4 blocks (the last
# one partial); SPLIT_PROGRAMS 1 keeps every row whole
SPLIT = {"BLOCK_N": 16, "SPLIT_PROGRAMS": 16}
WHOLE = {"BLOCK_N": 16, "SPLIT_PROGRAMS": 1}
# the default (SPLIT, WHOLE) computes both products as tl.dot over blocks of 16 rows (the
# group's rows, then padding); on the CUDA cores, the rows sharing a key/value head in blocks
# of 2, or one a program: a grouped-query group of 3 heads x 2 queries takes three programs
ROW_BLOCKS = {"DOT": 0, "ROWS": 2, "BLOCK_N": 16, "SPLIT_PROGRAMS": 16}
ONE_ROW = {"DOT": 0, "ROWS": 1, "BLOCK_N": 16, "SPLIT_PROGRAMS": 16}

CASES = {
    # name: (call, inputs, variants)
    "plain": (
        "q, k, v",
        qkv(2, 2, 2, 150, 48),
        f"[[{qkv(2, 1, 3, 23, 48)}], [{qkv(1, 2, 1, 45, 80, dv=24)}]]",  # 3 queries; dims
    ),
    "causal-scaled": (  # query i sees keys 0..i: rows of 1, 2 and 3 keys
        "q, k, v, is_causal=True, scale=0.3",
        qkv(2, 2, 3, 150, 48),
        f"[[{qkv(1, 1, 1, 29, 48)}]]",
    ),
    # 71 keys: 2 splits of 48 and 23 keys (a partial last block) under SPLIT and 2 under
    # ROW_BLOCKS' 8-key steps; whole rows of 5 blocks otherwise
    "grouped-query": (
        "q, k, v, enable_gqa=True",
        qkv(2, 4, 2, 71, 48, hk=2),
        f"[[{qkv(2, 6, 1, 17, 48, hk=2)}]]",
    ),
    "strided": (  # q, k, v stored (B, seq, H, D): the forward's transposes are strides
        "q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)",
        "torch.randn(1, 1, 2, 48), torch.randn(1, 150, 2, 48), torch.randn(1, 150, 2, 48)",
        "[]",
    ),
    "wide-head": ("q, k, v", qkv(1, 1, 1, 70, 144), "[]"),
}


def decode_runs(check_launches, case: str, params: dict) -> list:  # type: ignore[no-untyped-def]
    """The decode variant of CASES[case] with ``params``, checked against float64 SDPA: each
    run's launched kernels."""
    call, inputs, variants = CASES[case]
    runs = check_launches(
        sdpa_task(call, inputs, variants),
        skills=("attention-decode",),
        params=params,
        reference="float64",
        tol=2e-5,
    )
    assert runs
    return runs


@pytest.mark.parametrize("params", [SPLIT, WHOLE], ids=["split", "whole"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_decode_matches_sdpa_in_float64(check_launches, case: str, params: dict) -> None:
    runs = decode_runs(check_launches, case, params)
    for _, launched in runs:
        assert "attn_0_decode_kernel" in launched[0]
        # split rows are merged by the combine kernel; a whole row writes its output itself
        if params is WHOLE:
            assert all("combine" not in name for name in launched)
    if params is SPLIT and case in ("plain", "strided", "wide-head"):
        first = runs[0][1]
        assert any("combine" in name for name in first)


@pytest.mark.parametrize("params", [ROW_BLOCKS, ONE_ROW], ids=["rows-2", "rows-1"])
@pytest.mark.parametrize("case", ["grouped-query", "causal-scaled"])
def test_row_blocks_of_a_group_match_sdpa(check_launches, case: str, params: dict) -> None:
    decode_runs(check_launches, case, params)


BOOL_MASK = "torch.rand(1, 1, 2, 150) > 0.3"
# the second row masked out entirely: torch's SDPA outputs 0 there, split or not
MASKED_ROW = "(torch.rand(1, 1, 2, 29) > 0.3).index_fill(2, torch.tensor([1]), False)"


@pytest.mark.parametrize(
    "params", [SPLIT, WHOLE, ROW_BLOCKS], ids=["split", "whole", "cuda-cores"]
)
@pytest.mark.parametrize(
    ("queries", "mask", "variant"),
    [
        (2, BOOL_MASK, f"{qkv(1, 2, 2, 29, 48)}, {MASKED_ROW}"),
        (
            1,
            "torch.randn(1, 2, 1, 150)",
            f"{qkv(1, 2, 1, 29, 48)}, "
            "torch.randn(1, 1, 1, 29).masked_fill(torch.rand(29) > 0.7, -float('inf'))",
        ),
    ],
    ids=["bool", "additive"],
)
def test_masks_apply_to_every_key_split(
    check, queries: int, mask: str, variant: str, params: dict
) -> None:
    check(
        sdpa_task(
            "q, k, v, attn_mask=m", f"{qkv(1, 2, queries, 150, 48)}, {mask}",
            f"[[{variant}]]", "q, k, v, m",
        ),
        skills=("attention-decode",),
        params=params,
        reference="float64",
        tol=2e-5,
    )


@pytest.mark.parametrize("params", [SPLIT, ONE_ROW], ids=["dot", "cuda-cores"])
def test_bf16_operands_are_summed_in_fp32(check, params: dict) -> None:
    check(
        sdpa_task("q, k, v", qkv(1, 2, 1, 150, 48)),
        skills=("attention-decode",),
        params=params,
        dtype="bfloat16",
        reference="float64",
        tol=2e-2,
    )
