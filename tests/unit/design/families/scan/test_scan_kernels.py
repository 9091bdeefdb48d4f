"""Row and column scans, forward and reverse sums and products: verified against PyTorch under
the interpreter."""

from __future__ import annotations

import pytest
from design_checks import scan_task


@pytest.mark.parametrize(
    ("expr", "extra_arg", "inputs", "variant"),
    [
        ("torch.cumsum(x, dim=-1)", "", "torch.randn(7, 100)", "torch.randn(3, 301)"),
        (
            "torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])",
            "",
            "torch.randn(7, 100)",
            "torch.randn(2, 33)",
        ),
        (
            "torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])",
            "",
            "torch.randn(5, 3)",
            "torch.randn(4, 1)",
        ),
        ("torch.cumsum(x, dim=-1) - x", "", "torch.randn(5, 37)", "torch.randn(3, 65)"),
        (
            "torch.cumprod(x, dim=-1)",
            "",
            "torch.rand(7, 100) * 0.5 + 0.75",
            "torch.rand(2, 70) + 0.5",
        ),
        (
            "torch.flip(torch.cumprod(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])",
            "",
            "torch.rand(7, 100) * 0.5 + 0.75",
            "torch.rand(2, 33) + 0.5",
        ),
        (
            "torch.cumsum(x * mask.unsqueeze(-1), dim=1)",
            ", mask",
            "torch.randn(3, 37, 20), torch.rand(3, 37) < 0.7",
            "torch.randn(2, 9, 5), torch.rand(2, 9) < 0.5",
        ),
        (
            "torch.flip(torch.cumsum(torch.flip(x, dims=[1]), dim=1), dims=[1])",
            "",
            "torch.randn(3, 37, 20)",
            "torch.randn(2, 9, 5)",
        ),
    ],
    ids=[
        "forward",
        "reverse",
        "reverse-short",
        "exclusive",
        "product",
        "reverse-product",
        "masked-column",
        "reverse-column",
    ],
)
@pytest.mark.parametrize(
    "params",
    [
        {"BLOCK_N": 16, "BLOCK_S": 4, "COLS": 4, "STAGES": 2},
        {"BLOCK_N": 8, "ROWS": 4, "WARPS": 1, "BLOCK_S": 8, "COLS": 16, "STAGES": 1},
    ],
    ids=["blocks", "rows"],
)
def test_scans(check, expr: str, extra_arg: str, inputs: str, variant: str, params) -> None:
    body = scan_task(expr, extra_arg, inputs, variant)
    (src,) = check(body, params=params)
    assert "num_stages=STAGES" in src  # the block loop is pipelined
    if "flip" in expr:
        assert "torch.flip" not in src
    if "flip(torch.cumsum" in expr:
        # no lane reversal: a row sum reads vectors from the end, a column walk rows downwards
        assert "reverse=True" not in src
        assert ("tl.split" in src) == ("dims=[-1]" in expr)
