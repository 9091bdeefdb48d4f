"""Matrix products and their epilogues, every template variant run under the interpreter against
PyTorch, at small odd shapes (partial tiles along M, N and K) with input variants of other
shapes: plain, batched, transposed operands, TMA and pointer loads, split-K, tall-skinny, and
level-2 "GEMM + epilogue" graphs that must come out as one kernel."""

from __future__ import annotations

import pytest
from design_checks import forward_task

# 16 x 16 tiles over K blocks of 16: several tiles, K blocks and persistent steps at small sizes
SMALL = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}


def product_task(expr: str, inputs: str, variants: str = "[]") -> str:
    return forward_task(f"return {expr}", inputs, variants, "a, b")


LAYOUTS = {
    # name: (expr, inputs, variants) -- none of these strides suits TMA (K = 45 fp32 rows)
    "plain": (
        "torch.matmul(a, b)",
        "torch.randn(37, 45), torch.randn(45, 29)",
        "[[torch.randn(1, 45), torch.randn(45, 3)], [torch.randn(19, 7), torch.randn(7, 33)]]",
    ),
    "lhs-transposed": (
        "a.T @ b",
        "torch.randn(45, 37), torch.randn(45, 29)",
        "[[torch.randn(9, 5), torch.randn(9, 17)]]",
    ),
    "rhs-transposed": (
        "a @ b.T",
        "torch.randn(37, 45), torch.randn(29, 45)",
        "[[torch.randn(5, 9), torch.randn(17, 9)]]",
    ),
    "both-transposed": (
        "a.T @ b.T",
        "torch.randn(45, 37), torch.randn(29, 45)",
        "[[torch.randn(9, 5), torch.randn(17, 9)]]",
    ),
    "batched": (
        "torch.bmm(a, b)",
        "torch.randn(3, 37, 45), torch.randn(3, 45, 29)",
        "[[torch.randn(2, 5, 7), torch.randn(2, 7, 3)]]",
    ),
    "broadcast-rows": (  # a zero stride: one row repeated
        "a.expand(37, 48) @ b",
        "torch.randn(1, 48), torch.randn(48, 40)",
        "[[torch.randn(1, 48), torch.randn(48, 17)]]",
    ),
    "batched-transposed": (
        "torch.bmm(a.transpose(1, 2), b)",
        "torch.randn(3, 45, 37), torch.randn(3, 45, 29)",
        "[[torch.randn(2, 7, 5), torch.randn(2, 7, 3)]]",
    ),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_products_of_every_operand_layout_with_pointer_loads(check_launches, layout: str) -> None:
    expr, inputs, variants = LAYOUTS[layout]
    runs = check_launches(
        product_task(expr, inputs, variants), skills=("gemm-tiled",), params=SMALL
    )
    assert runs and all(launched and set(launched) == {"gemm_0_kernel"} for _, launched in runs)


ALIGNED = {
    # name: (expr, inputs with 16-byte aligned strides, inputs whose strides TMA cannot take)
    "plain": (
        "torch.matmul(a, b)",
        "torch.randn(37, 48), torch.randn(48, 40)",
        "torch.randn(37, 45), torch.randn(45, 40)",
    ),
    "lhs-transposed": (
        "a.T @ b",
        "torch.randn(48, 40), torch.randn(48, 24)",
        "torch.randn(48, 37), torch.randn(48, 24)",
    ),
    "rhs-transposed": (
        "a @ b.T",
        "torch.randn(37, 48), torch.randn(24, 48)",
        "torch.randn(37, 45), torch.randn(24, 45)",
    ),
    "batched-transposed": (
        "torch.bmm(a, b.transpose(1, 2))",
        "torch.randn(3, 37, 48), torch.randn(3, 24, 48)",
        "torch.randn(2, 37, 45), torch.randn(2, 24, 45)",
    ),
}


@pytest.mark.parametrize("layout", sorted(ALIGNED))
def test_aligned_operands_load_through_tma_descriptors(check_launches, layout: str) -> None:
    """The TMA design launches the descriptor kernel (transposing in registers where the
    operand is stored transposed); the same file falls back to pointer loads for a variant
    whose strides TMA cannot describe."""
    expr, inputs, odd = ALIGNED[layout]
    runs = check_launches(
        product_task(expr, inputs, f"[[{odd}]]"), skills=("gemm-tiled",), params=SMALL, expect=2
    )
    by_design = {"gemm-tma-loads" in skills: launched for skills, launched in runs}
    assert by_design[True] == ["gemm_0_tma_kernel", "gemm_0_kernel"]  # aligned, then not
    assert set(by_design[False]) == {"gemm_0_kernel"}


def test_a_k_off_multiples_of_16_loads_the_padded_copies_through_tma(check_launches) -> None:
    """K = 37 with M and N both 256 or more: the wrapper pads K with zeros to 48 in K-major
    copies, which TMA describes whatever the operands' own strides, so the TMA design is offered
    (the skill's tma_aligned fact counts the padding) and launches the descriptor kernel; the
    variant of 200 rows (below the padding's size) keeps the pointer kernel."""
    body = product_task(
        "torch.matmul(a, b)",
        "torch.randn(260, 37), torch.randn(37, 257)",
        "[[torch.randn(200, 37), torch.randn(37, 257)]]",
    )
    params = {**SMALL, "BLOCK_M": 128, "BLOCK_N": 128}  # 3 x 3 tiles, partial along M and N
    runs = check_launches(body, skills=("gemm-tiled",), params=params, expect=2)
    by_design = {"gemm-tma-loads" in skills: launched for skills, launched in runs}
    assert by_design[True] == ["gemm_0_tma_kernel", "gemm_0_kernel"], by_design
    assert set(by_design[False]) == {"gemm_0_kernel"}


# 21 x 24 outputs: 2 x 2 tiles of SMALL, partial along M and N (K = 45 partial too)
LINEAR = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear({k}, {n}{bias})
    def forward(self, x, r):
        {body}
def get_inputs():
    return [torch.randn(21, {k}), torch.randn(21, {n})]
def get_input_variants():
    return [[torch.randn(5, {k}), torch.randn(5, {n})]]
def get_init_inputs():
    return []
"""

EPILOGUES = {
    "bias-gelu": "return F.gelu(self.linear(x))",
    "bias-gelu-tanh": 'return F.gelu(self.linear(x), approximate="tanh")',
    "scale-residual-clamp": "return torch.clamp(self.linear(x) * 0.5 + r, -0.75, 0.75)",
    "silu-residual": "return F.silu(self.linear(x)) * 2.0 + r",
    "leaky-hardtanh": "return F.hardtanh(F.leaky_relu(self.linear(x), 0.2), -0.5, 0.5)",
    "sigmoid-gate": "return torch.sigmoid(self.linear(x)) * r",
    "tanh-relu-mish": "return F.mish(torch.relu(torch.tanh(self.linear(x)) + r))",
}


# K = 48: the TMA design and the pointer one, each with every epilogue; the pointer design's
# source is the same at K = 45, whose partial K block (masked at run time) one epilogue checks
# by default, the others slow
LINEAR_EPILOGUES = [
    pytest.param(k, e, id=f"{'tma' if k == 48 else 'pointers'}-{e}",
                 marks=[pytest.mark.slow] if k == 45 and e != "tanh-relu-mish" else [])
    for k in (45, 48) for e in sorted(EPILOGUES)
]


@pytest.mark.parametrize(("k", "epilogue"), LINEAR_EPILOGUES)
def test_linear_with_its_epilogue_is_one_kernel(check, epilogue: str, k: int) -> None:
    body = LINEAR.format(k=k, n=24, bias="", body=EPILOGUES[epilogue])
    for src in check(body, skills=("gemm-tiled",), params=SMALL, expect=1 + (k == 48)):
        assert src.count("def gemm_0(") == 1 and "def elementwise_" not in src
        assert "tl.dot(" in src and "torch.ops.aten.mm" not in src


def test_a_linear_layer_without_bias_and_its_scale(check) -> None:
    body = LINEAR.format(k=45, n=24, bias=", bias=False", body="return self.linear(x) * 3.0 - r")
    (src,) = check(body, skills=("gemm-tiled",), params=SMALL)
    assert "def elementwise_" not in src


@pytest.mark.parametrize("k", [45, 48], ids=["pointers", "tma"])
def test_bf16_operands_with_an_epilogue(check, k: int) -> None:
    body = LINEAR.format(k=k, n=24, bias="", body=EPILOGUES["scale-residual-clamp"])
    check(
        body, skills=("gemm-tiled",), params=SMALL, dtype="bfloat16", tol=3e-2, expect=1 + (k == 48)
    )


def test_fp16_operands_take_twice_the_k_values_per_tma_load(check, check_launches) -> None:
    """2-byte operands: the TMA kernel's K blocks are twice the pointer kernel's (the same bytes
    a stage), and split-K's slices stay whole TMA blocks, so no slice adds another's share."""
    body = forward_task(
        "return torch.relu(torch.matmul(a, b) + bias)",
        "torch.randn(37, 2112), torch.randn(2112, 40), torch.randn(40)",
        params="a, b, bias",
    )
    runs = check_launches(
        body, skills=("gemm-split-k",), params=SPLIT, dtype="float16", tol=5e-2, expect=2
    )
    assert {tuple(launched) for _, launched in runs} == {
        ("gemm_0_partial_tma_kernel", "gemm_0_combine_kernel"),
        ("gemm_0_partial_kernel", "gemm_0_combine_kernel"),
    }
    body = LINEAR.format(k=48, n=24, bias="", body=EPILOGUES["silu-residual"])
    check(body, skills=("gemm-tiled",), params=SMALL, dtype="float16", tol=5e-2, expect=2)


@pytest.mark.parametrize(
    ("dtype", "block_m", "warps", "tma_n"),
    [("float16", 64, 8, 256), ("float32", 64, 8, 128), ("float16", 128, 4, 128)],
    ids=["fp16-wide", "fp32-as-asked", "fp16-accumulator-full"],
)
def test_tma_tiles_of_2_byte_operands_take_twice_the_columns(
    check_launches, dtype: str, block_m: int, warps: int, tma_n: int
) -> None:
    """Under TMA loads, 2-byte operands double the tile's columns (up to 256) while the fp32
    accumulator keeps within 128 values a thread; 4-byte operands and a full accumulator keep
    BLOCK_N. The pointer kernel, serving operands TMA cannot describe, keeps BLOCK_N. (fp16:
    the interpreter widens bf16 operands to fp32, see ``_dot_operands``.)"""
    body = product_task(
        "torch.matmul(a, b)",
        "torch.randn(130, 48), torch.randn(48, 320)",
        "[[torch.randn(5, 45), torch.randn(45, 320)]]",  # K = 45: rows TMA cannot describe
    )
    params = {**SMALL, "BLOCK_M": block_m, "BLOCK_N": 128, "WARPS": warps}
    tol = 5e-2 if dtype == "float16" else 1e-4
    runs = check_launches(
        body, skills=("gemm-tma-loads",), params=params, dtype=dtype, tol=tol, record=["BLOCK_N"]
    )
    assert runs[0][1] == [f"gemm_0_tma_kernel BLOCK_N={tma_n}", "gemm_0_kernel BLOCK_N=128"]


def test_addmm_with_alpha_and_beta(check) -> None:
    body = forward_task(
        "return torch.addmm(c, a, b, beta=0.5, alpha=2.0)",
        "torch.randn(37, 29), torch.randn(37, 45), torch.randn(45, 29)",
        "[[torch.randn(5, 3), torch.randn(5, 7), torch.randn(7, 3)]]",
        "c, a, b",
    )
    (src,) = check(body, skills=("gemm-tiled",), params=SMALL)
    assert "* 2.0" in src and "* 0.5" in src


# the vendor path's epilogue tiles: 16 x 32 over 21 x 24 outputs (two row blocks, the last
# partial; columns past 24 masked)
VENDOR = {"BLOCK_M": 16, "BLOCK_N": 32, "WARPS": 4}


@pytest.mark.parametrize("epilogue", ["silu-residual", "tanh-relu-mish"])
@pytest.mark.parametrize("policy", ["fp32", "tf32"])
def test_the_vendor_product_then_one_epilogue_kernel(check, epilogue: str, policy: str) -> None:
    """PyTorch's product, then the bias and the whole element-wise chain in one kernel over its
    tiles (no element-wise kernel left), under either policy (the product follows the caller's
    flag, which the check sets as the policy does)."""
    body = LINEAR.format(k=45, n=24, bias="", body=EPILOGUES[epilogue])
    (src,) = check(body, skills=("gemm-vendor",), params=VENDOR, policy=policy)
    assert src.count("torch.ops.aten.mm.default(lhs, rhs)") == 1 and "tl.dot" not in src
    assert "def elementwise_" not in src and "def gemm_0_kernel(" in src
    assert "PyTorch's matrix product (cuBLAS)" in src


def test_a_batched_vendor_product_of_bf16_operands(check_launches) -> None:
    """bmm with a transposed right operand (cuBLAS reads it as stored): the product rounded to
    bf16 as PyTorch's own is, the epilogue on it in fp32; batch entries of other sizes."""
    body = product_task(
        "torch.relu(torch.bmm(a, b.transpose(1, 2))) * 0.5 - a[:, :, :1]",
        "torch.randn(3, 37, 45), torch.randn(3, 29, 45)",
        "[[torch.randn(2, 5, 7), torch.randn(2, 3, 7)]]",
    )
    runs = check_launches(body, skills=("gemm-vendor",), params=VENDOR, dtype="bfloat16",
                          tol=3e-2)
    assert [launched for _, launched in runs] == [["gemm_0_kernel", "gemm_0_kernel"]]


# 2 x 2 output tiles of 32 (partial along M and N) at 37 x 40: the interpreter's cost is per
# tile and K block, and a long K (>= 2048) is what split-K needs
SPLIT = {**SMALL, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 64, "SPLIT_PROGRAMS": 24}


@pytest.mark.parametrize("k", [2112, 2115], ids=["tma", "pointers"])
def test_split_k_adds_its_slices_then_applies_the_epilogue(check_launches, k: int) -> None:
    """Few output tiles, a long K: slices of K into the workspace, then the combine kernel (and
    the bias and ReLU); K = 2115 has no TMA-aligned rows, so its file takes pointer loads."""
    body = forward_task(
        "return torch.relu(torch.matmul(a, b) + bias)",
        f"torch.randn(37, {k}), torch.randn({k}, 40), torch.randn(40)",
        "[[torch.randn(5, 2100), torch.randn(2100, 24), torch.randn(24)]]",
        "a, b, bias",
    )
    runs = check_launches(body, skills=("gemm-split-k",), params=SPLIT, expect=1 + (k == 2112))
    for skills, launched in runs:
        partial = "gemm_0_partial_tma_kernel" if "gemm-tma-loads" in skills and k == 2112 else None
        assert launched[1::2] == ["gemm_0_combine_kernel"] * 2
        assert launched[0] == (partial or "gemm_0_partial_kernel")


def test_tall_skinny_products_take_the_whole_output_width(check) -> None:
    body = product_task(
        "torch.matmul(a, b)",
        "torch.randn(400, 40), torch.randn(40, 12)",
        "[[torch.randn(70, 9), torch.randn(9, 5)]]",
    )
    for src in check(body, skills=("gemm-tall-skinny",), params={"BLOCK_M": 32, "BLOCK_K": 16}):
        assert "BLOCK_N = max(16, min(16," in src  # N = 12 in one column block
        assert "GROUP_M=1" in src  # one column block: nothing to group


@pytest.mark.parametrize(
    ("expr", "inputs"),
    [
        ("torch.matmul(a, b)", "torch.randn(37, 100), torch.randn(100, 1)"),
        ("torch.matmul(a, b)", "torch.randn(1, 100), torch.randn(100, 29)"),
        ("torch.bmm(a, b)", "torch.randn(3, 37, 45), torch.randn(3, 45, 1)"),
    ],
    ids=["matrix-vector", "vector-matrix", "batched-matrix-vector"],
)
def test_matrix_vector_products_become_reductions(check, expr: str, inputs: str) -> None:
    """N or M of 1: a memory-bound reduction over K, no tensor-core tiles."""
    for src in check(product_task(expr, inputs), params={"LOOP_BLOCK": 16, "LOOP_COLS": 8}):
        assert "tl.dot" not in src and "def reduce_0(" in src


@pytest.mark.parametrize(
    "forward",
    ["t = torch.relu(a).T\n        return t @ b + t * 0.5", "return torch.relu(a).T @ b + a.T"],
    ids=["shared-view", "operand-in-epilogue"],
)
def test_an_operand_read_again_by_the_epilogue(check, forward: str) -> None:
    """The product's operand comes from an element-wise kernel through a view the forward
    runs; the epilogue reads it (or the input it came from) too: the operand's producer stays
    its own kernel, the epilogue loads what it needs."""
    body = forward_task(forward, "torch.randn(37, 37), torch.randn(37, 37)", params="a, b")
    for src in check(body, skills=("gemm-tiled",), params=SMALL):
        assert "def gemm_" in src


# operands stored other than K-major, with the other operand's free size past the wrapper's
# K_MAJOR_REUSE (256): under TF32 math the wrapper copies them K-major; the variants (below it)
# are read as they are stored
K_MAJOR = {
    # name: (expr, inputs TMA cannot describe as stored (K = 45), 16-byte aligned inputs,
    # variants); where M and N are both 256 or more (both-copied, batched) the wrapper pads the
    # odd K into copies TMA describes, so the TMA design is offered for those inputs too
    "rhs-row-major": (
        "torch.matmul(a, b)",
        "torch.randn(259, 45), torch.randn(45, 29)",
        "torch.randn(260, 48), torch.randn(48, 28)",
        "[[torch.randn(19, 7), torch.randn(7, 33)]]",
    ),
    "lhs-transposed": (
        "a.T @ b",
        "torch.randn(45, 37), torch.randn(45, 261)",
        "torch.randn(48, 36), torch.randn(48, 264)",
        "[[torch.randn(9, 5), torch.randn(9, 17)]]",
    ),
    "both-copied": (
        "a.T @ b",
        "torch.randn(45, 259), torch.randn(45, 261)",
        "torch.randn(48, 260), torch.randn(48, 264)",
        "[[torch.randn(9, 5), torch.randn(9, 17)]]",
    ),
    "batched": (
        "torch.bmm(a.transpose(1, 2), b)",
        "torch.randn(2, 45, 259), torch.randn(2, 45, 257)",
        "torch.randn(2, 48, 260), torch.randn(2, 48, 260)",
        "[[torch.randn(2, 7, 5), torch.randn(2, 7, 3)]]",
    ),
}


# both policies take the K-major branch, and the interpreter multiplies in fp32 either way: the
# padded layouts' tf32 runs are slow (their fp32 runs take the same path, as do the other
# layouts' tf32 runs for the tf32 policy)
K_MAJOR_RUNS = [
    pytest.param(layout, policy, id=f"{layout}-{policy}",
                 marks=[pytest.mark.slow] if policy == "tf32" and layout in (
                     "both-copied", "batched") else [])
    for layout in sorted(K_MAJOR) for policy in ("fp32", "tf32")
]


@pytest.mark.parametrize(("layout", "policy"), K_MAJOR_RUNS)
def test_k_major_copies_under_tf32_math(check_launches, layout: str, policy: str) -> None:
    """K-major copies (3xTF32 under fp32, TF32 under tf32) give the same products, with pointer
    loads and with TMA descriptors (the TMA design launches both kernels: one per input set)."""
    expr, odd, aligned, variants = K_MAJOR[layout]
    # 128-wide tiles over K blocks of 16 (three, the last partial where K is 45): the copies
    # need 256 rows or columns, and the interpreter's cost is per tile and K step; a step's
    # 128 x 16 x 128 product stays within numpy's single-threaded BLAS (a 128 x 32 x 128 one
    # is spread over BLAS threads, hundreds of times slower where every core is busy)
    params = {**SMALL, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 16}
    padded = layout in ("both-copied", "batched")
    for inputs, expect in ((odd, 2 if padded else 1), (aligned, 2)):
        runs = check_launches(
            product_task(expr, inputs, variants),
            skills=("gemm-tiled",),
            params=params,
            policy=policy,
            expect=expect,
        )
        want = {"gemm_0_kernel", "gemm_0_tma_kernel"} if expect == 2 else {"gemm_0_kernel"}
        assert {k for _, names in runs for k in names} == want


RECURRENT_HEAD = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(5, 19, 2, batch_first=True)
        self.fc = nn.Linear(19, 7)
    def forward(self, x, h0, c0):
        out, _ = self.rnn(x, (h0, c0))
        return torch.relu(self.fc(out[:, -1, :]))
def get_inputs():
    return [torch.randn(3, 11, 5), torch.randn(2, 3, 19), torch.randn(2, 3, 19)]
def get_input_variants():
    return []
def get_init_inputs():
    return []
"""


def test_a_recurrent_layer_runs_in_pytorch_before_its_head_kernel(check) -> None:
    # PyTorch runs the LSTM with the task's own parameters; its last step feeds
    # the linear head, a product with its bias and ReLU in one kernel
    for src in check(RECURRENT_HEAD, skills=("gemm-tiled",), params=SMALL):
        assert "torch.ops.aten.lstm.input(" in src and "tl.dot(" in src


TOKENS = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(45, 24)
    def forward(self, x, r):
        return F.gelu(self.fc(x)) * 0.5 + self.fc.bias + r
def get_inputs():
    return [torch.randn(3, 7, 45), torch.randn(3, 7, 24)]
def get_input_variants():
    return [[torch.randn(2, 1, 45), torch.randn(2, 1, 24)]]
def get_init_inputs():
    return []
"""


def test_a_linear_layer_on_tokens_keeps_its_epilogue_in_the_product_kernel(check) -> None:
    # (batch, seq, features) rows: PyTorch flattens them for the product and views the result
    # back; the GELU, scale, bias and residual after it run on the flat rows in the product's
    # epilogue (the residual reshaped to those rows)
    for src in check(TOKENS, skills=("gemm-tiled",), params=SMALL):
        forward = src[src.index("    def forward(self, x, r):"):]
        assert "def elementwise_" not in src and forward.count("= gemm_0(") == 1
        assert ".reshape([" in forward  # the view back, after the kernel
