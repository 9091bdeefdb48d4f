"""Max and average pooling in 1, 2 and 3 dimensions: verified against PyTorch under the
interpreter."""

from __future__ import annotations

import pytest

POOL = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = {module}
    def forward(self, x):
        return self.pool(x)
def get_inputs():
    return [torch.randn({shape})]
def get_input_variants():
    return [[torch.randn({variant})]]
def get_init_inputs():
    return []
"""


# planes (N x C, flattened by the wrapper) are few: 1-D and 2-D pooling tile them along ROWS, and
# 9 planes leave a partial block of rows under both tiles (ROWS 2 and 4); 3-D pooling walks them
# in the grid, where 4 planes reach a plane's stride (a window of depth 1 folds the depth into
# the planes: 2 x 2 x 2 = 8, the variant's 6 a partial block under ROWS 4). No size is 1: a
# size of 1 is held (the emitted file refuses others), and the variants check other sizes. The
# interpreter's time is the programs' count: max2d-dilated and avg2d-same-exclude-pad keep 3
# output rows (a full block of 2 and a partial one under STEPS 2, one partial block under 3)
POOLINGS = {
    # name: (module, input shape, variant's shape)
    "max1d": ("nn.MaxPool1d(kernel_size=5, stride=2, padding=2)", "3, 3, 37", "2, 3, 20"),
    "avg1d": ("nn.AvgPool1d(kernel_size=4, stride=3, padding=1)", "3, 3, 37", "2, 3, 20"),
    "avg1d-overlap": ("nn.AvgPool1d(kernel_size=5, stride=2, padding=2)", "3, 3, 37",
                      "2, 3, 20"),
    "max2d": ("nn.MaxPool2d(kernel_size=3, stride=2, padding=1)", "3, 3, 9, 11", "2, 4, 8, 13"),
    "max2d-ceil": ("nn.MaxPool2d(kernel_size=2, stride=2, ceil_mode=True)", "3, 3, 9, 11",
                   "1, 2, 7, 5"),
    "max2d-dilated": ("nn.MaxPool2d(kernel_size=3, stride=1, padding=1, dilation=2)",
                      "3, 3, 5, 13", "1, 2, 7, 8"),
    "max2d-unit-height": ("nn.MaxPool2d((1, 3), (1, 2), (0, 1))", "3, 3, 5, 19", "1, 2, 3, 8"),
    "avg2d-same-exclude-pad": (
        "nn.AvgPool2d(kernel_size=3, stride=1, padding=1, count_include_pad=False)",
        "3, 3, 3, 9", "2, 3, 4, 11"),
    "avg2d-ceil": ("nn.AvgPool2d(kernel_size=3, stride=2, padding=1, ceil_mode=True)",
                   "3, 3, 8, 9", "1, 2, 5, 5"),
    "avg2d-divisor": ("nn.AvgPool2d(kernel_size=2, stride=2, divisor_override=3)", "3, 3, 8, 10",
                      "1, 2, 5, 5"),
    "avg3d": ("nn.AvgPool3d(kernel_size=3, stride=2, padding=1)", "2, 2, 5, 7, 9",
              "1, 2, 4, 6, 5"),
    "avg3d-unit-depth": ("nn.AvgPool3d((1, 3, 3), 1, (0, 1, 1))", "2, 2, 2, 5, 9",
                         "1, 2, 3, 6, 5"),
    "max3d": ("nn.MaxPool3d(kernel_size=2, stride=2)", "2, 2, 5, 7, 9", "1, 2, 4, 6, 5"),
    "max3d-overlap": ("nn.MaxPool3d(kernel_size=3, stride=2, padding=1)", "2, 2, 5, 7, 9",
                      "1, 2, 4, 6, 5"),
}
TILES = {
    "small-tile": {"BLOCK_W": 8, "ROWS": 2, "STEPS": 2, "WARPS": 1},
    "wide-tile": {"BLOCK_W": 16, "ROWS": 4, "STEPS": 3, "WARPS": 4},
}
# The wide tile on these poolings only by default: 1-D; the two of 3 output rows (one partial
# block under STEPS 3); 3-D with a unit depth (the variant's 6 planes a partial block under
# ROWS 4) and without (a plane's stride reached). On the others it runs with -m slow: their
# small-tile case checks what the pooling computes, these the wide tile's blocks
WIDE_BY_DEFAULT = {"max1d", "max2d-dilated", "avg2d-same-exclude-pad", "avg3d-unit-depth",
                   "max3d-overlap"}


@pytest.mark.parametrize(
    ("module", "shape", "variant", "params"),
    [
        pytest.param(
            *POOLINGS[name], TILES[tile], id=f"{tile}-{name}",
            marks=[pytest.mark.slow] if tile == "wide-tile" and name not in WIDE_BY_DEFAULT
            else [],
        )
        for name in POOLINGS  # a pooling's two tiles side by side: one capture of its task
        for tile in TILES
    ],
)
def test_pooling(check, module: str, shape: str, variant: str, params) -> None:
    body = POOL.format(module=module, shape=shape, variant=variant)
    (src,) = check(body, skills=("pool-window",), params=params)
    kernel = src[src.index("@triton.jit") : src.index("def pool_0(")]
    # every load precedes the first store: a store would fence the loads after it
    assert kernel.rindex("tl.load(") < kernel.index("tl.store(")


@pytest.mark.parametrize(("skill", "stride"), [("pool-window", 2), ("pool-tap-tile", 3)])
def test_max_pooling_propagates_nan(check, skill: str, stride: int) -> None:
    body = POOL.format(
        module=f"nn.MaxPool2d(kernel_size=3, stride={stride}, padding=1)",
        shape="2, 3, 9, 11",
        variant="1, 2, 5, 5",
    )
    nan = "torch.where(torch.rand(2, 3, 9, 11) < 0.05, float('nan'), torch.randn(2, 3, 9, 11))"
    check(body, skills=(skill,), inputs=f"[[{nan}]]")


def test_a_large_window_unrolls_fewer_steps(check) -> None:
    # 11 x 11 windows: asked for 8 steps, the program takes one (its loads stay within
    # MAX_UNROLLED_LOADS); two windows and a ragged remainder along each axis
    from kernelwright.design.families.pool.template import MAX_UNROLLED_LOADS

    body = POOL.format(module="nn.AvgPool2d(kernel_size=11)", shape="1, 2, 23, 25",
                       variant="1, 3, 12, 11")
    (src,) = check(body, skills=("pool-window",),
                   params={"BLOCK_W": 8, "ROWS": 2, "STEPS": 8, "WARPS": 1})
    kernel = src[src.index("@triton.jit") : src.index("def pool_0(")]
    assert 0 < kernel.count("tl.load(") <= MAX_UNROLLED_LOADS


# The tap tile applies where the W stride is not 1, 2 or 4. Cases: windows that tile the rows
# (ragged ends), overlapping and dilated windows, padding counted or not, ceil mode, a divisor
# override, 3-D windows with their outer taps unrolled (27) and looped (36, past
# MAX_UNROLLED_TAPS); tiles of 4 outputs and 2 rows leave partial blocks along both
@pytest.mark.parametrize(
    ("module", "shape", "variant"),
    [
        ("nn.AvgPool2d(kernel_size=5)", "3, 3, 11, 17", "1, 2, 10, 26"),
        ("nn.MaxPool1d(kernel_size=4, stride=3, padding=1)", "3, 3, 37", "2, 3, 20"),
        ("nn.MaxPool2d(kernel_size=3, stride=3, padding=1, dilation=2)", "3, 3, 9, 13",
         "1, 2, 7, 8"),
        ("nn.AvgPool2d(kernel_size=3, stride=3, padding=1, ceil_mode=True, "
         "count_include_pad=False)", "3, 3, 8, 10", "1, 2, 5, 5"),
        ("nn.AvgPool2d(kernel_size=3, stride=(2, 3), divisor_override=7)", "3, 3, 8, 10",
         "1, 2, 5, 7"),
        ("nn.AvgPool3d(kernel_size=3, stride=3, padding=1)", "2, 2, 5, 7, 9", "1, 2, 4, 6, 5"),
        ("nn.MaxPool3d((4, 9, 3), stride=3)", "2, 2, 5, 11, 7", "1, 2, 4, 9, 10"),
    ],
    ids=["avg2d-tiling", "max1d-overlap", "max2d-dilated", "avg2d-ceil-exclude-pad",
         "avg2d-divisor", "avg3d-unrolled", "max3d-looped"],
)
def test_tap_tile_pooling(check, module: str, shape: str, variant: str) -> None:
    body = POOL.format(module=module, shape=shape, variant=variant)
    (src,) = check(body, skills=("pool-tap-tile",),
                   params={"BLOCK_W": 4, "ROWS": 2, "WARPS": 1})
    assert "KP=" in src  # the tap tile's launch, not the window template's
    assert ("in range(36):" in src) == ("(4, 9, 3)" in module)  # 36 outer taps loop


TRANSITION = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm{d}d(12)
        self.conv = nn.Conv{d}d(12, 8, 1, bias={bias}, groups={groups})
        self.pool = nn.AvgPool{d}d({pool})
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
    def forward(self, x):
        return self.pool(self.conv(torch.relu(self.bn(x))))
def get_inputs():
    return [torch.randn({shape})]
def get_input_variants():
    return [[torch.randn({variant})]]
def get_init_inputs():
    return []
"""


@pytest.mark.parametrize(
    ("d", "bias", "groups", "pool", "shape", "variant"),
    [
        (2, False, 1, "2", "2, 12, 9, 11", "1, 12, 6, 5"),
        (2, True, 2, "3, stride=2", "2, 12, 9, 11", "1, 12, 8, 7"),
        (3, True, 1, "(1, 2, 2)", "2, 12, 2, 7, 9", "1, 12, 2, 4, 5"),
    ],
    ids=["densenet-2x2", "bias-groups-overlapping", "3d"],
)
def test_a_pool_moved_before_its_one_by_one_convolution_computes_the_same(
    check, d: int, bias: bool, groups: int, pool: str, shape: str, variant: str
) -> None:
    """BN, ReLU, a 1 x 1 convolution and an average pool: the pool runs first (odd sizes floor
    away the last row and column; a bias and channel groups pass through), against PyTorch's
    own order in float64."""
    body = TRANSITION.format(d=d, bias=bias, groups=groups, pool=pool, shape=shape,
                             variant=variant)
    # the pool's programs unroll 2 output rows (STEPS 2): the default 8 loads 16 input rows a
    # program, most of them masked off at these 2 to 4 output rows, and the interpreter runs each
    (src,) = check(body, skills=("pool-window",), params={"STEPS": 2}, reference="float64",
                   tol=1e-5)
    forward = src[src.index("    def forward("):]
    assert f"avg_pool{d}d_of_input, = pool_" in forward, forward  # the input's pool
