"""Attention written out (q @ k^T, a scale, a mask, softmax, @ v) runs as the flash kernel once
recognised, and matches the task's own Model in float64 under the interpreter: MinGPT's causal
masked_fill with its dropout, an additive mask, keys and values of one head, repeated per head
(Hugging Face's repeat_kv: grouped-query heads) or tiled (attended as copies), keys given
transposed, heads flattened into the products' batch, heads flattened throughout with the query
scaled first (``nn.MultiheadAttention``, whose module is one case), at odd sizes with variants
of other sizes. Which graphs are rewritten: tests/unit/design/test_design_recognise_attention.py.
"""

from __future__ import annotations

import pytest
from design_checks import attention_task

# 16 x 16 blocks: several query blocks and key steps at these sizes
SMALL = {"BLOCK_M": 16, "BLOCK_N": 16}


def qkv(b: int, h: int, t: int, d: int) -> str:
    return ", ".join([f"torch.randn({b}, {h}, {t}, {d})"] * 3)


FLATTENED = (
    "q, k, v = x.split(20, dim=-1)\n"
    "T, D = q.shape[-2:]\n"
    "s = q.reshape(-1, T, D) @ k.reshape(-1, T, D).transpose(1, 2)\n"
    "p = F.softmax(s.view(q.shape[:-1] + (T,)) / 3.0, -1)\n"
    "return (p.reshape(-1, T, T) @ v.reshape(-1, T, D)).view(q.shape)"
)
CASES = {
    # name: (forward, init, inputs, variants, params)
    "mingpt": (
        "T = q.size(-2)\n"
        "att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))\n"
        "att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))\n"
        "return self.attn_dropout(F.softmax(att, dim=-1)) @ v",
        "self.register_buffer('bias', torch.tril(torch.ones(40, 40)).view(1, 1, 40, 40))\n"
        "self.attn_dropout = nn.Dropout(0.1)",
        qkv(2, 3, 37, 20),
        f"[[{qkv(1, 2, 5, 20)}]]",
        "q, k, v",
    ),
    "additive": (
        "bias = self.bias[: q.size(-2), : k.size(-2)]\n"
        "return F.softmax(q @ k.transpose(-2, -1) * 0.3 + bias, -1) @ v",
        "self.register_buffer('bias', torch.randn(40, 40))",
        qkv(2, 3, 37, 24),
        f"[[{qkv(2, 1, 19, 24)}]]",
        "q, k, v",
    ),
    "one-kv-head": (
        "return F.softmax(q @ k[:, :1].transpose(-2, -1) / 5.0, -1) @ v[:, :1]",
        "",
        qkv(2, 3, 21, 20),
        "[]",
        "q, k, v",
    ),
    # Hugging Face's repeat_kv: 6 query heads on 2 key/value heads (a variant: 8 on 2)
    "repeat-kv": (
        "b, kv, s, d = k.shape\n"
        "n = q.shape[1] // kv\n"
        "k = k[:, :, None, :, :].expand(b, kv, n, s, d).reshape(b, kv * n, s, d)\n"
        "v = v[:, :, None, :, :].expand(b, kv, n, s, d).reshape(b, kv * n, s, d)\n"
        "return F.softmax(q @ k.transpose(-2, -1) * 0.25, -1) @ v",
        "",
        "torch.randn(2, 6, 21, 16), torch.randn(2, 2, 29, 16), torch.randn(2, 2, 29, 16)",
        "[[torch.randn(1, 8, 5, 16), torch.randn(1, 2, 7, 16), torch.randn(1, 2, 7, 16)]]",
        "q, k, v",
    ),
    # tiled heads (head h is head h % 2): attended over the copies, no grouped heads
    "repeat-tiled": (
        "k, v = k.repeat(1, 3, 1, 1), v.repeat(1, 3, 1, 1)\n"
        "return F.softmax(q @ k.transpose(-2, -1) * 0.25, -1) @ v",
        "",
        "torch.randn(2, 6, 21, 16), torch.randn(2, 2, 29, 16), torch.randn(2, 2, 29, 16)",
        "[]",
        "q, k, v",
    ),
    "keys-transposed": (
        "return F.softmax(q @ kt * 0.2, -1) @ v",
        "",
        "torch.randn(1, 2, 21, 20), torch.randn(1, 2, 20, 29), torch.randn(1, 2, 29, 12)",
        "[]",
        "q, kt, v",
    ),
    "heads-flattened": (FLATTENED, "", "torch.randn(2, 3, 19, 60)", "[]", "x"),
    # nn.MultiheadAttention's math: (B*H, L, D) operands throughout, the query scaled first
    "flat-scaled-query": (
        "return F.softmax((q * 0.25) @ k.transpose(1, 2), -1) @ v",
        "",
        "torch.randn(5, 23, 16), torch.randn(5, 29, 16), torch.randn(5, 29, 12)",
        "[]",
        "q, k, v",
    ),
    "multihead-module": (
        "return self.attn(x, x, x)[0]",
        "self.attn = nn.MultiheadAttention(24, 3)",
        "torch.randn(21, 2, 24)",
        "[]",
        "x",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_written_out_attention_runs_as_the_flash_kernel(check_launches, case: str) -> None:
    forward, init, inputs, variants, params = CASES[case]
    runs = check_launches(
        attention_task(forward, inputs, init, variants, params),
        skills=("attention-flash",),
        params=SMALL,
        reference="float64",
        tol=2e-5,
    )
    assert runs
    # the scores never reach a reduction or GEMM kernel (the module's projections are GEMMs)
    allowed = {"attn", "elementwise"} | ({"gemm"} if case == "multihead-module" else set())
    if case == "repeat-kv":
        allowed = {"attn"}  # the kernel reads each key/value head for its group: no copies
    for _, launched in runs:
        kinds = {name.split("_")[0] for name in launched}
        assert "attn" in kinds and kinds <= allowed, launched
        assert len({name for name in launched if name.startswith("attn")}) == 1, launched
        # GPT's lower-triangle mask (a buffer, not is_causal) is found causal at run time: the
        # kernel never visits a key block past the diagonal; no other case's mask is causal
        causal = [name.endswith("+causal") for name in launched if name.startswith("attn")]
        assert all(causal) if case == "mingpt" else not any(causal), launched
