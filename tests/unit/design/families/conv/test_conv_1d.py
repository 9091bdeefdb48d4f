"""1-D convolutions (``nn.Conv1d``, ``nn.ConvTranspose1d``) lowered to 2-D ones of height 1, so
the 2-D templates serve them: forward and transposed, strided, padded, dilated, grouped, with
and without a bias and an epilogue, against PyTorch in float64 under the interpreter, with input
variants of other lengths."""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import write_task

from kernelwright.design.aten import classify
from kernelwright.design.capture import capture_path
from kernelwright.design.fusion import fuse
from kernelwright.design.lower import lower
from kernelwright.design.structures import group_options
from kernelwright.skills.library import SkillLibrary

# tiles of 64 output positions x 16 channels over K blocks of 16: a program or two per phase
# and channel block under the interpreter (its cost is per program and K step), several
# channel and K blocks
SMALL = {"BLOCK_M": 64, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}

CONV1D = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.{cls}({cin}, {cout}, {k}, stride={stride}, padding={padding},
                             dilation={dilation}, groups={groups}, bias={bias}{extra})
    def forward(self, x):
        return {body}
def get_inputs():
    return [torch.randn(2, {cin}, {length})]
def get_input_variants():
    return [[torch.randn(3, {cin}, {length2})]]
def get_init_inputs():
    return []
"""

# name: (class, C_in, C_out, kernel, stride, padding, dilation, groups, bias, extra, length,
# variant length); forward ones have K = C_in x taps >= 64 and C_out >= 32 (the implicit GEMM)
CASES = {
    "k3": ("Conv1d", 24, 33, 3, 1, 0, 1, 1, True, "", 37, 20),
    "k3-stride3-dilation4": ("Conv1d", 24, 40, 3, 3, 0, 4, 1, False, "", 61, 29),
    "k5-pad2": ("Conv1d", 17, 34, 5, 1, 2, 1, 1, True, "", 30, 9),
    "transposed-k3": ("ConvTranspose1d", 33, 34, 3, 1, 0, 1, 1, True, "", 21, 8),
    "transposed-k3-stride2-pad1": ("ConvTranspose1d", 40, 33, 3, 2, 1, 1, 1, False, "", 17, 6),
    "transposed-k4-stride2-outpad1": (
        "ConvTranspose1d", 33, 32, 4, 2, 1, 1, 1, True, ", output_padding=1", 13, 5,
    ),
}


def conv1d_task(case: str, body: str = "torch.relu(self.conv(x)) * 0.5") -> str:
    cls, cin, cout, k, stride, padding, dilation, groups, bias, extra, n, n2 = CASES[case]
    return CONV1D.format(cls=cls, cin=cin, cout=cout, k=k, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, bias=bias, extra=extra, length=n,
                         length2=n2, body=body)


@pytest.mark.parametrize("case", sorted(CASES))
def test_1d_convolutions_with_an_epilogue_match_float64(check, case: str) -> None:
    skill = "conv-transposed-implicit-gemm" if "transposed" in case else "conv-implicit-gemm"
    (src,) = check(conv1d_task(case), skills=(skill,), params=SMALL, reference="float64")
    assert "left to PyTorch" not in src


@pytest.mark.parametrize("layout", [0, 1])
def test_a_strided_1d_convolution_in_either_layout_matches_float64(check, layout: int) -> None:
    """NCHW gathers (0) and the channels-last copy (1) at stride 3, dilation 4."""
    (src,) = check(conv1d_task("k3-stride3-dilation4"), skills=("conv-implicit-gemm",),
                   params={**SMALL, "CHANNELS_LAST": layout}, reference="float64")
    assert ("_nhwc_copy(" in src) == (layout == 1)


@pytest.mark.parametrize(
    ("case", "layout"), [("k3-stride3-dilation4", 0), ("k3", 1), ("k5-pad2", 1)]
)
def test_the_implicit_gemm_gathers_where_the_copy_would_move_as_much_as_it_reads(
    tmp_path: Path, case: str, layout: int
) -> None:
    """Stride 3 over 3 taps: about as many input values (2 x 24 x 61) as patch values (2 x 18
    outputs x 72 taps), so the channels-last copy would double what the product reads; at
    stride 1 the patches hold each value 3 or 5 times and the copy stays."""
    path = write_task(tmp_path, conv1d_task(case))
    part = fuse(lower(capture_path(path, "full")))
    (options,) = [group_options(part, g, SkillLibrary.builtin()) for g in part.fused]
    (implicit,) = [o.choice for o in options.options if o.choice.skill == "conv-implicit-gemm"]
    assert implicit.params["CHANNELS_LAST"] == layout


@pytest.mark.parametrize("case", ["k3", "transposed-k3-stride2-pad1"])
def test_a_bare_1d_convolution_is_one_implicit_gemm(check, case: str) -> None:
    skill = "conv-transposed-implicit-gemm" if "transposed" in case else "conv-implicit-gemm"
    check(conv1d_task(case, "self.conv(x)"), skills=(skill,), params=SMALL, reference="float64")


OTHER_SKILLS = {
    # name: (the format's fields, the skill that serves it)
    "dilated-transposed": (  # cuDNN convolves it, the epilogue is fused
        dict(cls="ConvTranspose1d", cin=40, cout=33, k=3, stride=2, padding=1, dilation=2,
             groups=1, bias=False, length=17, length2=6, body="torch.relu(self.conv(x)) * 0.5"),
        "conv-vendor",
    ),
    "narrow": (  # too few taps for tensor-core tiles
        dict(cls="Conv1d", cin=3, cout=8, k=3, stride=2, padding=1, dilation=1, groups=1,
             bias=True, length=40, length2=11, body="torch.tanh(self.conv(x))"),
        "conv-vendor",
    ),
    "grouped": (  # its groups kept, in the direct kernel
        dict(cls="Conv1d", cin=12, cout=18, k=3, stride=1, padding=1, dilation=1, groups=3,
             bias=True, length=25, length2=7, body="F.gelu(self.conv(x))"),
        "conv-direct",
    ),
}


@pytest.mark.parametrize("case", sorted(OTHER_SKILLS))
def test_1d_convolutions_other_skills_serve_match_float64(check, case: str) -> None:
    fields, skill = OTHER_SKILLS[case]
    check(CONV1D.format(extra="", **fields), skills=(skill,),
          params={"BLOCK_M": 128, "BLOCK_N": 16, "WARPS": 4}, reference="float64")


def test_the_1d_convolution_becomes_a_2d_one_of_height_1(tmp_path: Path) -> None:
    path = write_task(tmp_path, conv1d_task("k3-stride3-dilation4"))
    part = fuse(lower(capture_path(path, "full")))
    convs = [n for n in part.graph.nodes if classify(n) == "conv"]
    assert len(convs) == 1
    (conv,) = convs
    assert conv.args[3:6] == ((1, 3), (0, 0), (1, 4))
    assert part.graph.meta(conv.args[0].name).hint == (2, 24, 1, 61)  # type: ignore[union-attr]
    assert [g.kind for g in part.groups] == ["conv"]
