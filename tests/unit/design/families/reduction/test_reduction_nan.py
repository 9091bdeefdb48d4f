"""NaN in reductions, as PyTorch has it: a max or min over values holding NaN is NaN, argmax and
argmin return the first NaN's index, a softmax row holding NaN is NaN throughout. The GPU's
max.f32 (``tl.max``, ``tl.maximum`` by default) returns the other operand; the kernels ask for
NaN-propagating maxima (``_max_combine``, ``propagate_nan``), which compile to ``max.NaN.f32``
at the same cost. The interpreter's maxima propagate NaN either way, but its comparisons do not
(``v == NaN`` is false), so argmax-like index searches are checked here by value."""

from __future__ import annotations

import pytest
from design_checks import softmax_rows_task
from test_reduction_kernels import LOOP, columns_task, rows_task
from test_reduction_losses import SPLIT
from test_reduction_relay import SMALL as RELAY_SMALL


def nan_at(shape: tuple[int, ...], every: int, at: int) -> str:
    """A random tensor of ``shape`` with NaN where the flat index is ``at`` modulo ``every``."""
    n = 1
    for s in shape:
        n *= s
    return (
        f"torch.where(torch.arange({n}).reshape{shape} % {every} == {at}, float('nan'), "
        f"torch.randn{shape})"
    )


# rows holding NaN after the maximum, before it, twice, beside +inf, none (a plain row), and -inf
# throughout; then rows of 70 (several looped blocks) with NaN late in some rows only
NAN_ROWS = (
    "[[torch.tensor([[1.0, 5.0, 3.0, float('nan'), 0.5], [float('nan'), 2.0, 9.0, -1.0, 0.0],"
    " [1.0, float('nan'), 3.0, float('nan'), 1.0], [float('inf'), 2.0, float('nan'), 1.0, 0.0],"
    " [1.0, 2.0, 3.0, 2.0, 1.0], [-float('inf')] * 5])],"
    f" [{nan_at((5, 70), 131, 60)}]]"
)


@pytest.mark.parametrize(
    "expr",
    [
        "torch.amax(x, dim=-1)",
        "torch.amin(x, dim=-1)",
        "torch.argmax(x, dim=-1)",
        "torch.argmin(x, dim=-1)",
        "torch.max(x, dim=-1)",  # values and indices
        "torch.softmax(x, dim=-1)",
        "torch.log_softmax(x, dim=-1)",
    ],
)
def test_row_reductions_of_rows_holding_nan_match_pytorch(check, expr: str) -> None:
    sources = check(rows_task(expr), inputs=NAN_ROWS, params=LOOP, expect=2)
    for src in sources:
        assert "tl.max(" not in src and "tl.min(tl.where(mask" not in src


def test_column_argmax_and_max_of_columns_holding_nan_match_pytorch(check) -> None:
    columns = f"[[{nan_at((3, 37, 11), 53, 40)}], [torch.full((2, 9, 5), float('nan'))]]"
    for expr in ("torch.argmax(x, dim=1)", "torch.amax(x, dim=1)"):
        check(
            columns_task(expr),
            inputs=columns,
            skills=("column-looped",),
            params={"LOOP_BLOCK": 4, "LOOP_COLS": 8},
        )


def test_split_reductions_of_a_tensor_holding_nan_match_pytorch(check) -> None:
    """The partials of a split reduction are combined by a second kernel, which must keep the
    NaN of one partial (and, for argmax, its index)."""
    values = f"[[{nan_at((64, 200), 4999, 3001)}]]"
    for expr in ("x.amax()", "x.amin()", "torch.argmax(x)"):
        check(
            rows_task(expr, rows=64, cols=200),
            inputs=values,
            skills=("split-reduction",),
            params=SPLIT,
        )


def test_relay_softmax_of_a_row_holding_nan_is_nan_throughout(check) -> None:
    """A team's row maximum is combined from its slices' partials: one NaN slice makes the row
    NaN, as a softmax over it is in PyTorch. Rows 0 and 2 hold a NaN (in their last and first
    slices), row 1 none; the same design on rows without NaN is test_reduction_relay's."""
    body = softmax_rows_task("(2, 20000)")
    nan = f"[[{nan_at((3, 20000), 29989, 17000)}]]"
    check(body, inputs=nan, skills=("row-relay",), params=RELAY_SMALL)
