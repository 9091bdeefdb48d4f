"""Reductions, softmax-like rows and norms: every schedule verified against PyTorch under the
interpreter, on odd sizes and non-power-of-two rows, with variants of other shapes."""

from __future__ import annotations

import re

import pytest
from design_checks import norm_task

# 4 rows a program: odd row counts (7, 13, 3 x 11) leave the last block of rows partly empty
LOOP = {"LOOP_BLOCK": 16, "LOOP_COLS": 8, "LOOP_ROWS": 4, "SPLIT_PROGRAMS": 16}


def rows_task(expr: str, rows: int = 7, cols: int = 37, extra: str = "") -> str:
    return f"""
rows = {rows}
cols = {cols}
{extra}
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return {expr}
def get_inputs():
    return [torch.randn(rows, cols)]
def get_input_variants():
    return [[torch.randn(3, 129)], [torch.randn(1, 5)]]
def get_init_inputs():
    return []
"""


@pytest.mark.parametrize(
    ("expr", "expect"),
    [
        ("x.sum(dim=-1)", 2),
        ("x.mean(dim=-1, keepdim=True)", 2),
        ("torch.amax(x, dim=-1)", 2),
        ("torch.amin(x, dim=1)", 2),
        ("torch.argmax(x, dim=-1)", 2),
        ("torch.argmin(x, dim=1)", 2),
        # a single sweep over a strided axis: only the looped column schedule is offered
        ("x.sum(dim=0)", 1),
        ("torch.argmax(x, dim=0)", 1),
    ],
)
def test_simple_reductions_every_schedule(check, expr: str, expect: int) -> None:
    sources = check(rows_task(expr), params=LOOP, expect=expect)
    assert any("tl.sum" in s or "tl.max" in s or "tl.min" in s for s in sources)


# a row sum, then a max, a mean and a logsumexp over its kept unit dimension (each reduces one
# value: lowered to copies), and a max that drops that dimension
UNIT_CHAIN = (
    "torch.logsumexp(torch.max(x.sum(-1, keepdim=True), dim=1, keepdim=True)[0]"
    ".mean(1, keepdim=True), 1, keepdim=True).amax(1) * 2.0"
)


def test_reductions_over_unit_dimensions_join_the_row_reduction(check) -> None:
    for src in check(rows_task(UNIT_CHAIN), params=LOOP, expect=2):
        # one kernel: the row sum with everything after it as its epilogue
        forward = src[src.index("    def forward(self, x):"):]
        assert re.findall(r"= (\w+_\d+)\(", forward) == ["reduce_0"]
        assert "torch.ops.aten" not in forward
        assert "tl.sum" in src


def test_argmax_ties_resolve_to_the_first_index(check) -> None:
    ties = "[[torch.tensor([[1.0, 3.0, 3.0, 0.0, 3.0]] * 3)], [torch.round(torch.randn(5, 70))]]"
    check(rows_task("torch.argmax(x, dim=-1)"), inputs=ties, params=LOOP, expect=2)
    # the argmax sweep follows a mean's sweep: it must still run forwards (first index wins)
    centred = "torch.argmax(x - x.mean(dim=-1, keepdim=True), dim=-1)"
    for src in check(rows_task(centred), inputs=ties, skills=("row-looped",), params=LOOP):
        assert "for back in range" not in src


def test_column_argmax_ties_resolve_to_the_first_index(check) -> None:
    """Per-lane accumulators over [BLOCK_R, BLOCK_P] tiles: ties within a lane, across lanes
    and across blocks (and an all-equal column) all resolve to the first class."""
    ties = (
        "[[torch.round(torch.randn(3, 37, 11))], [torch.zeros(2, 9, 5)],"
        " [torch.tensor([[[0.0], [2.0], [1.0], [2.0], [2.0]]])]]"
    )
    (src,) = check(
        columns_task("torch.argmax(x, dim=1)"),
        inputs=ties,
        skills=("column-looped",),
        params={"LOOP_BLOCK": 4, "LOOP_COLS": 8},
    )
    assert "tl.arange(0, BLOCK_R)[:, None]" in src


def columns_task(expr: str, shape: tuple[int, ...] = (3, 37, 11), offset: float = 0.0) -> str:
    return f"""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return {expr}
def get_inputs():
    return [torch.randn{shape} + {offset}]
def get_input_variants():
    return [[torch.randn(2, 5, 3) * 3.0 - {offset}], [torch.randn(1, 70, 40) + {offset}]]
def get_init_inputs():
    return []
"""


@pytest.mark.parametrize(
    "expr",
    ["torch.softmax(x, dim=-1)", "torch.log_softmax(x, dim=-1)", "torch.logsumexp(x, dim=-1)"],
)
def test_softmax_family(check, expr: str) -> None:
    check(rows_task(expr), skills=("row-onepass",))
    check(rows_task(expr), skills=("row-looped",), params=LOOP)


def test_online_softmax_folds_the_sum_into_the_max_sweep(check) -> None:
    (src,) = check(
        rows_task("torch.softmax(x, dim=-1)"), skills=("row-looped", "online-softmax"), params=LOOP
    )
    looped = src.split("def reduce_0_looped_kernel")[1]
    assert looped.count("# ---- pass") == 2  # max+sum in one sweep, then the write
    (plain,) = [
        s
        for s in check(rows_task("torch.softmax(x, dim=-1)"), skills=("row-looped",), params=LOOP)
        if "online" not in s.split('"""')[1]
    ]
    assert plain.split("def reduce_0_looped_kernel")[1].count("# ---- pass") == 3


def test_softmax_over_a_strided_axis_uses_the_column_schedule(check) -> None:
    body = """
batch = 3
classes = 7
pixels = 37
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.log_softmax(x, dim=1)
def get_inputs():
    return [torch.randn(batch, classes, pixels)]
def get_input_variants():
    return [[torch.randn(2, 150, 17)], [torch.randn(1, 3, 300)]]
def get_init_inputs():
    return []
"""
    (src,) = check(body, skills=("column-onepass",))
    assert "BLOCK_R" in src and "axis=0" in src
    # tiles of 16 positions: 37, 17 and 300 of them each end in a masked tile
    check(body, skills=("column-looped",), params={**LOOP, "LOOP_COLS": 16})


def test_per_lane_online_softmax_handles_infinite_lanes(check) -> None:
    """Lanes that see only -inf (masked logits, a fully masked row) add nothing; a fully
    masked row gives NaN as in PyTorch."""
    expr = "torch.log_softmax(x.masked_fill(x > 0.5, float('-inf')), dim=-1)"
    inputs = "[[torch.randn(7, 37)], [torch.full((2, 37), 1.0)], [torch.randn(3, 129) - 1.0]]"
    for src in check(rows_task(expr), inputs=inputs, skills=("online-softmax",), params=LOOP):
        looped = src.split("def reduce_0_looped_kernel")[1]
        assert "o_exp" in looped and "tl.max(e_blk" not in looped  # per lane, merged once


WELFORD = "(x - x.mean(dim={d}, keepdim=True)).pow(2).mean(dim={d}), x.mean(dim={d})"


@pytest.mark.parametrize("schedule", ["row", "column"])
def test_per_lane_welford_matches_torch_on_a_masked_tail_and_a_large_offset(
    check, schedule: str
) -> None:
    """The looped Welford fold on rows whose last block is masked (37 = 2 x 16 + 5), rows
    shorter than a block (5 < 16) and a mean of 1000 (where E[x^2] - E[x]^2 loses the
    variance): per-lane counts, one merge with Chan's formula."""
    if schedule == "row":
        offset = "[[torch.randn(7, 37) + 1000.0], [torch.randn(3, 5) * 3.0 - 500.0]]"
        body = rows_task(WELFORD.format(d=-1))
    else:
        offset = "[[torch.randn(3, 37, 11) + 1000.0], [torch.randn(2, 5, 3) * 3.0 - 500.0]]"
        body = columns_task(WELFORD.format(d=1))
    for src in check(body, inputs=offset, skills=(f"{schedule}-looped", "welford"), params=LOOP):
        looped = src.split("_looped_kernel(")[1]
        assert "_welford_combine" in looped and "blk_" not in looped


def test_per_lane_welford_pivots_ignore_masked_lanes_where_the_value_is_infinite(check) -> None:
    """The variance of log(x) over rows of 37 in blocks of 16: the masked tail loads 0 and
    log(0) is -inf there. A lane's pivot comes only from a valid element, so no -inf reaches
    the lanes' merge (where -inf x a zero weight would make NaN)."""
    body = rows_task(
        "((y := x.log()) - y.mean(dim=-1, keepdim=True)).pow(2).mean(dim=-1), y.mean(dim=-1)"
    )
    positive = "[[torch.rand(7, 37) + 0.5], [torch.rand(3, 5) * 2.0 + 0.1]]"
    check(body, inputs=positive, skills=("row-looped", "welford"), params=LOOP)


def test_per_lane_welford_keeps_its_precision_over_many_blocks_at_a_large_offset(check) -> None:
    """An instance norm over rows of 33123 at 1000 +- 3 in blocks of 1024 (33 updates a lane):
    lanes whose running means rounded at 1000 put the output 1.5e-4 off (torch: 5e-6 from
    float64); statistics of x minus each lane's first element, merged about the row's first
    element, keep it within 1e-5."""
    body = norm_task("InstanceNorm2d(2, affine=True)", "(1, 2, 181, 183)")
    shifted = "[[torch.randn(1, 2, 181, 183) * 3.0 + 1000.0], [torch.randn(1, 2, 182, 181) - 40.0]]"
    (src,) = check(
        body, inputs=shifted, skills=("row-looped", "welford"), params={"LOOP_BLOCK": 1024}
    )
    assert "_pivot" in src.split("_looped_kernel(")[1]


# rows: an odd count of them, a few programs each (13, not more: every design runs them all)
NORMS = {
    "layer": """
class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)
    def forward(self, x):
        return self.norm(x)
hidden = 100
def get_inputs():
    return [torch.randn(13, hidden)]
def get_input_variants():
    return [[torch.randn(3, 5, hidden)], [torch.randn(1, hidden) + 5.0]]
def get_init_inputs():
    return [hidden]
""",
    "rms": """
class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
hidden = 67
def get_inputs():
    return [torch.randn(3, 11, hidden)]
def get_init_inputs():
    return [hidden]
""",
    "group": """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(3, 12)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
    def forward(self, x):
        return self.norm(x)
def get_inputs():
    return [torch.randn(2, 12, 7, 9)]
def get_input_variants():
    return [[torch.randn(3, 12, 5, 3)]]
def get_init_inputs():
    return []
""",
    "instance": """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm2d(5, affine=True)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)
    def forward(self, x):
        return self.norm(x)
def get_inputs():
    return [torch.randn(3, 5, 7, 9)]
def get_init_inputs():
    return []
""",
    "l1": """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return x / x.abs().sum(dim=-1, keepdim=True)
def get_inputs():
    return [torch.randn(13, 100)]
def get_init_inputs():
    return []
""",
    "l2": """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return F.normalize(x, p=2.0, dim=1)
def get_inputs():
    return [torch.randn(3, 7, 37)]
def get_init_inputs():
    return []
""",
    "frobenius": """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return x / torch.norm(x, p="fro")
def get_inputs():
    return [torch.randn(37, 100)]
def get_init_inputs():
    return []
""",
    "fused_add_rms": """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(100) + 0.5)
    def forward(self, x, residual):
        residual = x + residual
        inv = torch.rsqrt(residual.pow(2).mean(-1, keepdim=True) + 1e-6)
        return residual * inv * self.weight, residual
def get_inputs():
    return [torch.randn(13, 100), torch.randn(13, 100)]
def get_init_inputs():
    return []
""",
}


@pytest.mark.parametrize("name", sorted(NORMS))
def test_norms_every_design(check, name: str) -> None:
    check(NORMS[name], params=LOOP, expect=1)


def test_welford_folds_the_variance_into_the_mean_sweep(check) -> None:
    (src,) = check(NORMS["group"], skills=("row-looped", "welford"), params=LOOP)
    looped = src.split("def reduce_0_looped_kernel")[1]
    assert "Welford" in src and looped.count("# ---- pass") == 2


def test_group_norm_writes_without_dividing_per_element(check) -> None:
    """The normalising sweep walks the group's channels in an outer loop (the affine weight
    and bias load once per channel) and H x W in blocks; sweeps alternate direction (each
    re-reads first what the previous one read last, still in L2), the first runs forwards."""
    variants = "[[torch.randn(2, 12, 7, 9) + 100.0], [torch.randn(3, 12, 5, 3)]]"
    for src in check(
        NORMS["group"], skills=("row-looped",), inputs=variants, params={"LOOP_BLOCK": 16}
    ):
        looped = src.split("def reduce_0_looped_kernel")[1].split("def reduce_0(")[0]
        passes = looped.split("# ---- pass")[1:]
        assert "for start in range" in passes[0] and "for back in range" in passes[1]
        assert "red_hi in range" in passes[-1] or "back_hi in range" in passes[-1]
        assert "(cols //" not in passes[-1]
        assert "BLOCK_LO = min(BLOCK_N" in src


def test_column_write_sweep_nests_over_the_outer_reduced_dim(check) -> None:
    """A per-channel weight over a (channels x rows) reduced extent with contiguous positions
    after it: the column schedule's write sweep loads the weight once per channel."""
    body = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(5) + 0.5)
    def forward(self, x):
        return (x - x.mean(dim=(1, 2), keepdim=True)) * self.w[None, :, None, None]
def get_inputs():
    return [torch.randn(2, 5, 3, 7)]
def get_input_variants():
    return [[torch.randn(2, 5, 9, 17) + 50.0]]
def get_init_inputs():
    return []
"""
    (src,) = check(body, skills=("column-looped",), params={"LOOP_BLOCK": 2, "LOOP_COLS": 8})
    write = src.split("def reduce_0_looped_kernel")[1].split("# ---- pass")[-1]
    assert "back_hi in range" in write and "BLOCK_LO = min(BLOCK_R" in src


def test_batch_norm_inference_is_a_per_channel_elementwise_kernel(check) -> None:
    body = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm2d(5)
        with torch.no_grad():
            self.norm.running_mean.normal_(0.0, 0.5)
            self.norm.running_var.uniform_(0.5, 2.0)
            self.norm.weight.uniform_(0.5, 1.5)
    def forward(self, x):
        return self.norm(x)
def get_inputs():
    return [torch.randn(3, 5, 7, 9)]
def get_init_inputs():
    return []
"""
    (src,) = check(body, skills=("elementwise-rows",))
    assert "rows_1" in src  # the channel index is recovered once per row


def test_bf16_storage_computes_in_fp32(check) -> None:
    check(NORMS["layer"], dtype="bfloat16", tol=2e-2)
