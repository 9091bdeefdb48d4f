"""Alignment hints (``KernelArgs.hint``): strides and row lengths divisible by 2, 4 or 8 but not 16
reach the kernel as ``*_ALIGN`` constexprs, and the kernel restates each value as a multiple of
it. The hint is computed from the runtime value, so a file emitted for rows of 1000 must stay
exact on rows of 1001 (odd: no alignment) and 36 (a multiple of 4): checked under the
interpreter against PyTorch."""

from __future__ import annotations

import pytest

from kernelwright.design.kernel.common import WRAPPER_HELPERS, align_hints, launch, signature
from kernelwright.design.kernel.common import Code as _Code
from kernelwright.design.kernel.emitter import KernelArgs

LOOP = {"LOOP_BLOCK": 256, "LOOP_ROWS": 2, "ROWS": 2}

# rows of 1000 at capture; the inputs then change the row length (and so every hint)
ODD_ROWS = (
    "[[torch.randn(5, 1000), torch.randint(0, 1000, (5,))],"
    " [torch.randn(3, 1001), torch.randint(0, 1001, (3,))],"
    " [torch.randn(7, 36), torch.randint(0, 36, (7,))]]"
)


def ce_task() -> str:
    return """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, logits, labels):
        return F.cross_entropy(logits, labels, label_smoothing=0.1)
def get_inputs():
    return [torch.randn(6, 1000), torch.randint(0, 1000, (6,))]
def get_init_inputs():
    return []
"""


def softmax_task(dim: int, shape: str, variants: str) -> str:
    return f"""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.softmax(x, dim={dim})
def get_inputs():
    return [torch.randn({shape})]
def get_input_variants():
    return {variants}
def get_init_inputs():
    return []
"""


def test_align_helper_is_the_power_of_two_divisor_capped_at_16() -> None:
    scope: dict[str, object] = {}
    exec(WRAPPER_HELPERS["_align"], scope)
    align = scope["_align"]
    assert callable(align)
    got = {n: align(n) for n in (1000, 1001, 36, 1024, 48, 6, 0, -1000)}
    assert got == {1000: 8, 1001: 1, 36: 4, 1024: 16, 48: 16, 6: 2, 0: 16, -1000: 8}


def test_only_scalars_seen_with_a_small_power_of_two_divisor_are_hinted() -> None:
    args = KernelArgs()
    for name, seen in [("a", 1000), ("b", 1001), ("c", 1024), ("d", 1), ("e", 0), ("f", 36)]:
        args.scalar(name, f"{name}_expr", seen)
    args.scalar("g", "g_expr")  # no value at capture: never hinted
    assert args.hinted == ["a", "f"]
    lines = signature("k", args, ["BLOCK"])
    assert "A_ALIGN: tl.constexpr, F_ALIGN: tl.constexpr," in "\n".join(lines)
    assert lines[-len(align_hints(args)) :] == ["    " + ln for ln in align_hints(args)]
    assert "    a = a // A_ALIGN * A_ALIGN" in lines
    code = _Code()
    launch("k", "grid", args, {"BLOCK": 1024}, code)
    call = " ".join(code.lines)
    assert "A_ALIGN=_align(a_expr)" in call and "F_ALIGN=_align(f_expr)" in call
    assert "B_ALIGN" not in call and "G_ALIGN" not in call


def test_unhinted_kernels_are_unchanged() -> None:
    args = KernelArgs()
    args.scalar("n", "n", 1024)
    lines = signature("k", args, ["BLOCK"])
    assert lines[-1] == "):" and not any("ALIGN" in ln for ln in lines)


@pytest.mark.parametrize("skills", [("row-onepass",), ("row-looped", "online-softmax")])
def test_cross_entropy_rows_of_1000_stay_exact_on_other_row_lengths(check, skills) -> None:
    sources = check(ce_task(), skills=skills, params=LOOP, inputs=ODD_ROWS, tol=1e-4)
    for src in sources:
        assert "LOGITS_STRIDE0_ALIGN=_align(logits.stride(0))" in src
        assert "N_COLS_ALIGN=_align(n_cols)" in src
        assert "n_cols = n_cols // N_COLS_ALIGN * N_COLS_ALIGN" in src
        assert "def _align(n):" in src


def test_softmax_rows_and_columns_with_hinted_sizes(check) -> None:
    # rows: the row length bounds the vectorised axis
    rows = softmax_task(-1, "4, 1000", "[[torch.randn(3, 1001)], [torch.randn(5, 36)]]")
    for src in check(rows, params=LOOP, expect=2):
        assert "N_COLS_ALIGN" in src
    # columns: the contiguous positions after the softmax dimension bound it
    cols = softmax_task(
        1,
        "2, 5, 36",
        "[[torch.randn(2, 3, 1001)], [torch.randn(3, 4, 1000)], [torch.randn(1, 1, 6)]]",
    )
    # tiles of up to 256 positions: one masked tile of 64 on 36 of them, four on 1000 and 1001,
    # the last masked (COLS for the one-pass kernel, whose tile of TILE elements holds 256
    # positions of 4 reduced rows, LOOP_COLS for the looped ones; the one-pass default of 16
    # for a softmax multiplies its programs under the interpreter for no other path)
    for src in check(cols, params={"LOOP_BLOCK": 4, "LOOP_COLS": 256, "COLS": 256,
                                   "TILE": 1024}):
        assert "N_INNER_ALIGN" in src
