"""The flash-attention kernel under the interpreter against torch's SDPA in float64, at small odd
shapes (partial query and key blocks, head dims padded to a power of two) with input variants
of other shapes run by the same file: causal and not, a custom scale, one query (decode), keys
longer than the queries, grouped-query heads, boolean and additive masks (with a row masked
out), strided operands, the wide template, fp32 and tf32 policies, bf16."""

from __future__ import annotations

import pytest
from design_checks import attention_task, forward_task, precision_rule

# 16 x 16 blocks: several query blocks and key steps at these sizes (a quarter of the
# interpreter's work of the defaults' 64-row clamp would be no cheaper: its cost is per block)
SMALL = {"BLOCK_M": 16, "BLOCK_N": 16}


def sdpa_task(call: str, inputs: str, variants: str = "[]", params: str = "q, k, v") -> str:
    return forward_task(f"return F.scaled_dot_product_attention({call})", inputs, variants, params)


def qkv(
    b: int, h: int, m: int, n: int, d: int, hk: int | None = None, dv: int | None = None
) -> str:
    hk, dv = hk or h, dv or d
    return (
        f"torch.randn({b}, {h}, {m}, {d}), torch.randn({b}, {hk}, {n}, {d}), "
        f"torch.randn({b}, {hk}, {n}, {dv})"
    )


CASES = {
    # name: (call, inputs, variants)
    "plain": (
        "q, k, v",
        qkv(2, 2, 37, 37, 48),
        f"[[{qkv(2, 1, 1, 23, 48)}], [{qkv(1, 2, 19, 45, 80, dv=24)}]]",  # decode, N != M, dims
    ),
    "causal-scaled": (
        "q, k, v, is_causal=True, scale=0.3",
        qkv(1, 2, 37, 37, 80),
        f"[[{qkv(1, 2, 1, 29, 80)}], [{qkv(1, 1, 45, 21, 48)}]]",  # decode; more queries than keys
    ),
    "negative-scale": (  # the scale goes on each score, not on each row's max
        "q, k, v, scale=-0.4",
        qkv(1, 2, 37, 37, 48),
        "[]",
    ),
    "grouped-query": (
        "q, k, v, enable_gqa=True",
        qkv(1, 4, 21, 33, 48, hk=2),
        f"[[{qkv(1, 6, 1, 17, 48, hk=2)}]]",
    ),
    "strided": (  # q, k, v stored (B, seq, H, D): the forward's transposes are strides
        "q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True",
        "torch.randn(1, 37, 2, 48), torch.randn(1, 37, 2, 48), torch.randn(1, 37, 2, 48)",
        "[]",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_flash_attention_matches_sdpa_in_float64(check_launches, case: str) -> None:
    call, inputs, variants = CASES[case]
    runs = check_launches(
        sdpa_task(call, inputs, variants),
        skills=("attention-flash",),
        params=SMALL,
        reference="float64",
        tol=2e-5,
    )
    name = "attn_0_kernel+causal" if "is_causal=True" in call else "attn_0_kernel"
    assert runs and all(set(launched) == {name} for _, launched in runs)


def test_a_mask_that_allows_no_later_key_takes_the_causal_schedule(check_launches) -> None:
    """A boolean mask with nothing above the diagonal (a causal mask with holes below it; keys
    fewer than queries in the variant) runs the causal schedule and matches SDPA with the same
    mask; one True above the diagonal keeps the full schedule."""
    lower = "(torch.rand(1, 1, 37, 37) > 0.3).tril()"
    fewer_keys = f"{qkv(1, 2, 37, 29, 48)}, (torch.rand(1, 1, 37, 29) > 0.3).tril()"
    one_above = "(torch.rand(1, 1, 37, 37) > 0.3).tril().index_fill(3, torch.tensor([36]), True)"
    runs = check_launches(
        sdpa_task(
            "q, k, v, attn_mask=m", f"{qkv(1, 2, 37, 37, 48)}, {lower}",
            f"[[{fewer_keys}], [{qkv(1, 2, 37, 37, 48)}, {one_above}]]", "q, k, v, m",
        ),
        skills=("attention-flash",),
        params=SMALL,
        reference="float64",
        tol=2e-5,
    )
    assert runs and all(
        launched == ["attn_0_kernel+causal", "attn_0_kernel+causal", "attn_0_kernel"]
        for _, launched in runs
    )


@pytest.mark.parametrize("split", [0, 1])
def test_one_key_loop_or_two_compute_the_same(check_launches, split: int) -> None:
    """SPLIT_KEYS 0 (every key block masked, in one loop) and 1 (the blocks no row cuts first,
    unmasked): a causal mask found on the device (the first input set), one that is not causal
    (the variant) and an additive mask (the second variant), keys not a multiple of the block."""
    lower = "(torch.rand(1, 1, 37, 37) > 0.3).tril()"
    additive = "torch.randn(1, 1, 37, 29)"
    runs = check_launches(
        sdpa_task(
            "q, k, v, attn_mask=m", f"{qkv(1, 2, 37, 37, 48)}, {lower}",
            f"[[{qkv(1, 2, 37, 29, 48)}, torch.rand(1, 1, 37, 29) > 0.3], "
            f"[{qkv(1, 2, 37, 29, 48)}, {additive}]]",
            "q, k, v, m",
        ),
        skills=("attention-flash",),
        params={**SMALL, "SPLIT_KEYS": split},
        reference="float64",
        tol=2e-5,
    )
    assert runs and all(
        launched == ["attn_0_kernel+causal", "attn_0_kernel", "attn_0_kernel"]
        for _, launched in runs
    )


@pytest.mark.parametrize(("split", "tma"), [(0, 0), (1, 0), (1, 1)])
def test_a_whole_lower_triangle_mask_is_not_loaded(check_launches, split: int, tma: int) -> None:
    """SKIP_TRIANGLE 1: a boolean mask that is the whole lower triangle (GPT's) is found on the
    device (the kernel's second flag): the kernel reads neither it nor, under the causal
    schedule, any key past the diagonal, and applies the position mask itself (keys fewer than
    queries in the variant; a triangle with one hole in the second variant loads the mask
    again)."""
    whole = "torch.ones(1, 1, 37, 37, dtype=torch.bool).tril()"
    fewer_keys = f"{qkv(1, 2, 37, 29, 48)}, torch.ones(1, 1, 37, 29, dtype=torch.bool).tril()"
    hole = f"{whole}.index_fill(3, torch.tensor([5]), False)"
    runs = check_launches(
        sdpa_task(
            "q, k, v, attn_mask=m", f"{qkv(1, 2, 37, 37, 48)}, {whole}",
            f"[[{fewer_keys}], [{qkv(1, 2, 37, 37, 48)}, {hole}]]", "q, k, v, m",
        ),
        skills=("attention-flash",),
        params={**SMALL, "SPLIT_KEYS": split, "TMA": tma, "SKIP_TRIANGLE": 1},
        reference="float64",
        tol=2e-5,
    )
    name = "attn_0_tma_kernel" if tma else "attn_0_kernel"
    assert runs and all(
        launched == [f"{name}+causal+exact", f"{name}+causal+exact", f"{name}+causal"]
        for _, launched in runs
    )


BOOL_MASK = "torch.rand(37, 29) > 0.3"
# the third row masked out entirely: torch's SDPA outputs 0 there
MASKED_ROW = "(torch.rand(1, 1, 37, 29) > 0.3).index_fill(2, torch.tensor([2]), False)"


@pytest.mark.parametrize(
    ("mask", "variant"),
    [
        (BOOL_MASK, MASKED_ROW),
        (
            "torch.randn(1, 2, 37, 29)",
            "torch.randn(1, 1, 1, 29).masked_fill(torch.rand(29) > 0.7, -float('inf'))",
        ),
    ],
    ids=["bool", "additive"],
)
def test_masks_broadcast_to_every_head_and_query(check, mask: str, variant: str) -> None:
    inputs = f"{qkv(1, 2, 37, 29, 48)}, {mask}"
    check(
        sdpa_task(
            "q, k, v, attn_mask=m", inputs, f"[[{qkv(1, 2, 37, 29, 48)}, {variant}]]", "q, k, v, m"
        ),
        skills=("attention-flash",),
        params=SMALL,
        reference="float64",
        tol=2e-5,
    )


def test_head_dims_past_128_take_the_wide_template(check) -> None:
    check(
        sdpa_task("q, k, v, is_causal=True", qkv(1, 1, 21, 21, 144)),
        skills=("attention-flash-wide",),
        params=SMALL,
        reference="float64",
        tol=2e-5,
    )


@pytest.mark.parametrize(("policy", "tol"), [("fp32", 2e-5), ("tf32", 2e-2)])
def test_math_follows_the_precision_policy(check, policy: str, tol: float) -> None:
    sources = check(
        sdpa_task("q, k, v", qkv(1, 1, 21, 21, 48)),
        skills=("attention-flash",),
        params={**SMALL, "FP32_MATH": 1},
        policy=policy,
        reference="float64",
        tol=tol,
    )
    assert '_dot_precision(q, "ieee")' in sources[0]
    # the scores' product keeps fp32 accuracy under every policy; only the values' takes TF32
    line = next(x.strip() for x in sources[0].splitlines() if x.strip().startswith("QK_PREC"))
    assert "input_precision=QK_PRECISION" in sources[0]
    rule = 'DOT_PRECISION = _dot_precision(q, "ieee")\n' + line
    assert precision_rule(rule, allow_tf32=True) == ("tf32", "ieee")
    assert precision_rule(rule, allow_tf32=False) == ("ieee", "ieee")


def test_bf16_operands_accumulate_in_fp32(check) -> None:
    check(
        sdpa_task("q, k, v, is_causal=True", qkv(1, 2, 37, 37, 48)),
        skills=("attention-flash",),
        params=SMALL,
        dtype="bfloat16",
        reference="float64",
        tol=2e-2,
    )


def test_a_launch_refused_for_shared_memory_is_retried_shallower() -> None:
    """The wrappers' stage estimate is a bound: the compiler may need more shared memory (head
    dim 96 padded to 128 under 3xTF32 asked 237,568 bytes of 232,448 on an H200). The launch
    then goes a stage shallower, remembers the depth that fits, and never goes below one."""
    import triton
    from triton.runtime.errors import OutOfResources

    from kernelwright.design.families.attention.launch import ATTN_LAUNCH

    helpers: dict[str, object] = {"triton": triton}
    exec(ATTN_LAUNCH, helpers)
    fitting = helpers["_launch_fitting"]
    tried: list[int] = []

    def launch(depth: int) -> None:
        tried.append(depth)
        if depth > 2:
            raise OutOfResources(237568, 232448, "shared memory")

    fitting(launch, 4, "blocks")  # type: ignore[operator]
    assert tried == [4, 3, 2]
    tried.clear()
    fitting(launch, 4, "blocks")  # type: ignore[operator]
    assert tried == [2]

    def never(depth: int) -> None:
        raise OutOfResources(300000, 232448, "shared memory")

    with pytest.raises(OutOfResources):
        fitting(never, 2, "other blocks")  # type: ignore[operator]


def test_heads_merged_back_with_a_reshape_after_the_kernel(check) -> None:
    # q, k and v as views of one projection (a transformer block's): PyTorch's CPU attention
    # then returns a tensor whose transpose(1, 2) is contiguous, so capture records the heads'
    # merge as a view; the flash kernel's output is laid out (batch, heads, seq, dim), where
    # that view is impossible: the forward runs it as a reshape (a copy here)
    task = attention_task(
        "q, k, v = qkv.permute(2, 0, 3, 1, 4)\n"
        "o = F.scaled_dot_product_attention(q, k, v)\n"
        "return o.transpose(1, 2).reshape(qkv.shape[0], qkv.shape[1], -1)",
        "torch.randn(2, 5, 3, 3, 8)",
        params="qkv",
    )
    for src in check(task, skills=("attention-flash",)):
        forward = src[src.index("    def forward(self"):]
        assert ".reshape([" in forward
        assert "torch.ops.aten.view.default(" not in forward and ".view(" not in forward


@pytest.mark.parametrize(("case", "split"), [
    ("plain", 1), ("causal-scaled", 1), ("grouped-query", 0), ("strided", 1),
])
def test_descriptor_loads_compute_what_pointer_loads_do(check_launches, case: str,
                                                        split: int) -> None:
    """TMA 1: keys and values by tensor-memory-accelerator descriptors, keys past N and head
    dims past D read as zeros (partial key blocks, head dims 48 and 80 padded to 64 and 128,
    a value head dim of 24, grouped-query heads, operands stored (B, seq, H, D))."""
    call, inputs, variants = CASES[case]
    runs = check_launches(
        sdpa_task(call, inputs, variants),
        skills=("attention-flash",),
        params={**SMALL, "TMA": 1, "SPLIT_KEYS": split},
        reference="float64",
        tol=2e-5,
    )
    name = "attn_0_tma_kernel+causal" if "is_causal=True" in call else "attn_0_tma_kernel"
    assert runs and all(set(launched) == {name} for _, launched in runs)


def test_operands_a_descriptor_cannot_describe_take_the_pointer_kernel(check_launches) -> None:
    """Rows of 9 fp32 values (36 bytes: not a multiple of 16) and a key broadcast over the batch
    by a zero stride: the pointer kernel, with the same results; a mask still applies."""
    runs = check_launches(
        sdpa_task(
            "q, k.expand(2, -1, -1, -1), v.expand(2, -1, -1, -1), attn_mask=m",
            "torch.randn(2, 2, 37, 16), torch.randn(1, 2, 29, 16), torch.randn(1, 2, 29, 16), "
            "torch.rand(37, 29) > 0.3",
            "[[torch.randn(2, 1, 21, 9), torch.randn(1, 1, 19, 9), torch.randn(1, 1, 19, 9), "
            "torch.rand(21, 19) > 0.3]]",
            "q, k, v, m",
        ),
        skills=("attention-flash",),
        params={**SMALL, "TMA": 1},
        reference="float64",
        tol=2e-5,
    )
    assert runs and all(set(launched) == {"attn_0_kernel"} for _, launched in runs)
