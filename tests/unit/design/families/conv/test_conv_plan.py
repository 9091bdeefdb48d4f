"""Which convolutions become ``conv`` groups, what joins them, and which skill each gets (no
kernels run: capture, fusion and the skills' verdicts only)."""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import designs_for, write_task

from kernelwright.design.structures import group_options
from kernelwright.skills.library import SkillLibrary

TASK = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.{conv}
        self.scale = nn.Parameter(torch.randn({cout}, 1, 1))
    def forward(self, x):
        return {body}
def get_inputs():
    return [torch.randn({shape})]
def get_init_inputs():
    return []
"""
EPILOGUE = "F.leaky_relu(self.conv(x) * self.scale, 0.1)"


def plan(tmp_path: Path, conv: str, cout: int, shape: str, body: str = EPILOGUE):
    path = write_task(tmp_path, TASK.format(conv=conv, cout=cout, shape=shape, body=body))
    part, designs = designs_for(path)
    library = SkillLibrary.builtin()
    return part, designs, [group_options(part, g, library) for g in part.fused]


def test_a_wide_convolution_and_its_epilogue_are_one_implicit_gemm(tmp_path: Path) -> None:
    """8 x 48 x 48 output positions: 144 tiles of 128 fill an H200's 132 SMs."""
    part, designs, (options,) = plan(tmp_path, "Conv2d(16, 48, 3, padding=1)", 48, "8, 16, 48, 48")
    (group,) = part.fused
    assert group.kind == "conv" and len(part.groups) == 1
    ops = [part.graph.node(n).target for n in group.nodes]
    # the conv's own bias was lowered into the epilogue: an add before the scale
    assert ops.count("aten.convolution.default") == 1 and "aten.add.Tensor" in ops
    assert "aten.leaky_relu.default" in ops and "aten.mul.Tensor" in ops
    assert [o.choice.skill for o in options.options] == ["conv-implicit-gemm", "conv-vendor"]
    assert list(designs[0].skills) == ["conv-implicit-gemm"]
    g = options.facts.gemm
    assert g is not None and (g.m, g.n, g.k) == (8 * 48 * 48, 48, 16 * 9)


def test_where_cudnn_multiplies_on_tensor_cores_it_ranks_first_but_against_bf16_tma_loads(
    tmp_path: Path,
) -> None:
    """The same wide convolution under the bf16 and tf32 policies: the facts carry the policy
    and the dtypes it runs. Where cuDNN multiplies on tensor cores itself, the implicit GEMM
    ranks first only where it loads 16-bit operands by TMA (stride 1 here; measured cuDNN's
    peer under bf16), and cuDNN's channels-last convolution first under tf32 (fp32 operands:
    measured faster than the TMA kernel on three of four tasks) and where the stride leaves
    the implicit GEMM pointer loads."""
    path = write_task(tmp_path, TASK.format(conv="Conv2d(16, 48, 3, padding=1)", cout=48,
                                            shape="8, 16, 50, 50", body=EPILOGUE))
    part, _ = designs_for(path)
    library = SkillLibrary.builtin()
    (fp32,) = [group_options(part, g, library) for g in part.fused]
    (bf16,) = [group_options(part, g, library, precision="bf16") for g in part.fused]
    assert fp32.facts.dtypes == ("float32",) and bf16.facts.dtypes == ("bfloat16",)
    assert [o.choice.skill for o in fp32.options] == ["conv-implicit-gemm", "conv-vendor"]
    assert [o.choice.skill for o in bf16.options] == ["conv-implicit-gemm", "conv-vendor"]
    assert bf16.options[0].choice.params["TMA"] == 1
    assert bf16.options[1].choice.params["CHANNELS_LAST"] == 1
    # the epilogue's tile, 32 values a thread: where it transposes cuDNN's channels-last
    # output, 128 positions (long NCHW store runs) x up to 64 channels in 8 warps; on an NCHW
    # output (fp32), 32 positions x up to 128 channels (48 here: 64) in 4 warps
    tile = bf16.options[1].choice.params
    assert (tile["BLOCK_M"], tile["BLOCK_N"], tile["WARPS"]) == (128, 64, 8)
    nchw = fp32.options[1].choice.params
    assert (nchw["BLOCK_M"], nchw["BLOCK_N"], nchw["WARPS"]) == (32, 64, 4)
    # tf32: fp32 operands, but cuDNN may multiply them on tensor cores too
    (tf32,) = [group_options(part, g, library, precision="tf32") for g in part.fused]
    assert tf32.facts.dtypes == ("float32",) and tf32.facts.precision == "tf32"
    assert [o.choice.skill for o in tf32.options] == ["conv-vendor", "conv-implicit-gemm"]
    assert tf32.options[1].choice.params["TMA"] == 1  # second, though it loads by TMA
    # the implicit GEMM reads channels-last copies under every policy (measured faster than
    # the NCHW gathers under fp32), in K blocks no wider than a tap's 16 channels (a wider
    # block would multiply zeros)
    implicit = [o.choice.params for opts in (fp32, bf16, tf32) for o in opts.options
                if o.choice.skill == "conv-implicit-gemm"]
    assert [p["CHANNELS_LAST"] for p in implicit] == [1, 1, 1]
    assert [p["BLOCK_K"] for p in implicit] == [16, 16, 16]
    # strided: the patches are no box of the input, so pointer loads, and cuDNN first
    path = write_task(tmp_path, TASK.format(conv="Conv2d(16, 48, 3, stride=2, padding=1)",
                                            cout=48, shape="8, 16, 50, 50", body=EPILOGUE),
                      name="strided")
    part, _ = designs_for(path)
    for policy in ("bf16", "tf32"):
        (opts,) = [group_options(part, g, library, precision=policy) for g in part.fused]
        assert [o.choice.skill for o in opts.options] == ["conv-vendor", "conv-implicit-gemm"]


@pytest.mark.parametrize(("cin", "blocks"), [(8, (16, 16)), (48, (32, 64)), (256, (32, 64))])
def test_the_implicit_gemm_takes_k_blocks_of_128_bytes_at_most_a_taps_channels(
    tmp_path: Path, cin: int, blocks: tuple[int, int]
) -> None:
    """fp32 blocks of 32 values and bf16 blocks of 64 (128 bytes a row), or a tap's channels
    rounded up to a power of two (at least 16, tl.dot's least) where there are fewer."""
    path = write_task(tmp_path, TASK.format(conv=f"Conv2d({cin}, 48, 3, padding=1)", cout=48,
                                            shape=f"8, {cin}, 50, 50", body=EPILOGUE))
    part, _ = designs_for(path)
    library = SkillLibrary.builtin()
    got = []
    for precision in ("fp32", "bf16"):
        (opts,) = [group_options(part, g, library, precision=precision) for g in part.fused]
        (implicit,) = [o for o in opts.options if o.choice.skill == "conv-implicit-gemm"]
        got.append(implicit.choice.params["BLOCK_K"])
    assert tuple(got) == blocks


@pytest.mark.parametrize(("cout", "stride", "block_k"),
                         [(128, 1, 64), (64, 1, 32), (128, 2, 32)])
def test_fp32_tma_steps_take_64_values_where_an_sm_keeps_as_many_blocks(
    tmp_path: Path, cout: int, stride: int, block_k: int
) -> None:
    """128 x 128 tiles hold one block an SM with K blocks of 32 fp32 values or 64 (3 stages
    or 2): 64, half the steps. 128 x 64 tiles hold two with 32 and one with 64: 32. A strided
    convolution gathers its patches with pointer loads (no boxes): 32, the width measured
    there."""
    from kernelwright.design.families.conv.defaults import resident_blocks

    assert (resident_blocks(128, 128, 32), resident_blocks(128, 128, 64)) == (1, 1)
    assert (resident_blocks(128, 64, 32), resident_blocks(128, 64, 64)) == (2, 1)

    def fp32_params(conv: str, skill: str) -> dict[str, int]:
        path = write_task(tmp_path, TASK.format(
            conv=f"{conv}(64, {cout}, 3, stride={stride}, padding=1)", cout=cout,
            shape="4, 64, 66, 70", body=EPILOGUE))
        part, _ = designs_for(path)
        (opts,) = [group_options(part, g, SkillLibrary.builtin(), precision="fp32")
                   for g in part.fused]
        (option,) = [o for o in opts.options if o.choice.skill == skill]
        return option.choice.params

    assert fp32_params("Conv2d", "conv-implicit-gemm")["BLOCK_K"] == block_k
    # the transposed phase kernel gathers with pointer loads whatever its tiles: 32
    assert fp32_params("ConvTranspose2d", "conv-transposed-implicit-gemm")["BLOCK_K"] == 32


def test_too_few_tiles_rank_the_vendor_conv_first(tmp_path: Path) -> None:
    """2 x 12 x 12 output positions: 3 tiles of 128 would leave most SMs idle."""
    _, designs, (options,) = plan(tmp_path, "Conv2d(16, 48, 3, padding=1)", 48, "2, 16, 12, 12")
    assert [o.choice.skill for o in options.options] == ["conv-vendor", "conv-implicit-gemm"]
    assert options.options[1].cost > 10 * options.options[0].cost


def test_a_shallow_convolution_sums_directly_or_keeps_the_vendor_conv(tmp_path: Path) -> None:
    """K = 3 x 3 x 3 taps: no tensor-core tiles; the direct kernel (one group of 27 taps), or
    cuDNN's conv and our epilogue kernel (ranked after it where the output fills the GPU)."""
    _, designs, (options,) = plan(tmp_path, "Conv2d(3, 48, 3)", 48, "8, 3, 64, 64")
    assert [o.choice.skill for o in options.options] == ["conv-direct", "conv-vendor"]
    (why,) = [r for s, r in options.skipped if s == "conv-implicit-gemm"]
    assert any("K = C_in*KH*KW = 27" in line for line in why)
    assert any("one group of 27 taps" in line for line in options.options[0].choice.reasons)
    assert list(designs[0].skills) == ["conv-direct"]


def test_a_shallow_convolution_alone_is_one_direct_kernel(tmp_path: Path) -> None:
    _, designs, (options,) = plan(tmp_path, "Conv2d(3, 8, 3)", 8, "2, 3, 12, 12", "self.conv(x)")
    assert [o.choice.skill for o in options.options] == ["conv-direct"]


def test_a_narrow_deep_convolution_alone_is_left_to_pytorch(tmp_path: Path) -> None:
    """8 output channels (too few for tensor-core tiles) over 16 x 3 x 3 = 144 taps (too many
    for the direct kernel), and no epilogue for a kernel of ours."""
    _, designs, (options,) = plan(tmp_path, "Conv2d(16, 8, 3)", 8, "2, 16, 12, 12",
                                  "self.conv(x)")
    assert options.options == [] and designs == []
    (why,) = [r for s, r in options.skipped if s == "conv-direct"]
    assert any("144 taps" in line for line in why), why


def test_a_1d_convolution_is_a_2d_one_with_its_epilogue(tmp_path: Path) -> None:
    """Lowered to height 1 (``test_conv_1d.py`` checks the kernels): one group, whose implicit
    GEMM has K = 16 x 3 taps and M = 2 x 10 output positions."""
    body = "F.leaky_relu(self.conv(x) * 2.0, 0.1)"
    part, _, (options,) = plan(tmp_path, "Conv1d(16, 48, 3)", 48, "2, 16, 12", body)
    assert [g.kind for g in part.groups] == ["conv"]
    g = options.facts.gemm
    assert g is not None and (g.m, g.n, g.k) == (20, 48, 48)


@pytest.mark.parametrize(
    ("conv", "taps", "direct"),
    [("Conv2d(16, 16, 3, groups=16)", 9, True), ("Conv2d(16, 48, 3, groups=2)", 72, False)],
    ids=["depthwise", "two-groups"],
)
def test_a_grouped_convolution_and_its_epilogue_are_one_group(
    tmp_path: Path, conv: str, taps: int, direct: bool
) -> None:
    cout = 48 if "groups=2" in conv else 16
    body = "F.leaky_relu(self.conv(x) * 2.0, 0.1)"
    part, _, (options,) = plan(tmp_path, conv, cout, "2, 16, 12, 12", body)
    assert [g.kind for g in part.groups] == ["conv"]
    g = options.facts.gemm
    assert g is not None and (g.k, g.groups) == (taps, int(conv.split("groups=")[1][:-1]))
    # a product per group is no implicit GEMM; the direct kernel takes few taps a value
    skills = {o.choice.skill for o in options.options}
    assert skills == ({"conv-direct", "conv-vendor"} if direct else {"conv-vendor"})
    (why,) = [r for s, r in options.skipped if s == "conv-implicit-gemm"]
    assert any("groups" in line for line in why)


def test_a_transposed_convolution_and_its_epilogue_are_one_group_by_phases(
    tmp_path: Path,
) -> None:
    """An upsampling layer (kernel 4, stride 2): a ``conv`` group whose epilogue joins it; K
    counts one output phase's taps (2 x 2 of the 4 x 4, times C_in); the phase kernel ranks
    first under fp32, cuDNN's transposed convolution with our epilogue second; the forward
    kernels do not take it."""
    conv = "ConvTranspose2d(32, 48, 4, stride=2, padding=1)"
    part, designs, (options,) = plan(tmp_path, conv, 48, "8, 32, 24, 24")
    assert [g.kind for g in part.groups] == ["conv"]
    g = options.facts.gemm
    assert g is not None and g.transposed and (g.m, g.n, g.k) == (8 * 48 * 48, 48, 32 * 4)
    skills = [o.choice.skill for o in options.options]
    assert skills == ["conv-transposed-implicit-gemm", "conv-vendor"]
    assert list(designs[0].skills) == ["conv-transposed-implicit-gemm"]
    for skill in ("conv-implicit-gemm", "conv-direct"):
        (why,) = [r for s, r in options.skipped if s == skill]
        assert any("transposed" in line for line in why), (skill, why)


def test_a_grouped_transposed_convolution_of_narrow_groups_is_one_block_diagonal_product(
    tmp_path: Path,
) -> None:
    """Two groups of 24 output channels: no 16-wide tile stays inside one group, so the phase
    kernel applies, multiplying one block-diagonal weight (K and N of the whole convolution,
    twice the products); eight groups of 8 would be eight times the products: cuDNN keeps
    them."""
    conv = "ConvTranspose2d(32, 48, 4, stride=2, groups=2)"
    _, designs, (options,) = plan(tmp_path, conv, 48, "2, 32, 12, 12")
    (ok,) = [o for o in options.options if o.choice.skill == "conv-transposed-implicit-gemm"]
    assert any("block-diagonal" in line for line in ok.choice.reasons), ok.choice.reasons
    assert ok.choice.params["BLOCK_N"] >= 32  # a tile may span groups: the zeros are in it
    conv = "ConvTranspose2d(32, 64, 4, stride=2, groups=8)"
    _, designs, (options,) = plan(tmp_path, conv, 64, "2, 32, 12, 12")
    assert [o.choice.skill for o in options.options] == ["conv-vendor"]
    (reasons,) = [r for s, r in options.skipped if s == "conv-transposed-implicit-gemm"]
    assert any("8 groups of 8 output channels" in line for line in reasons), reasons


def test_a_grouped_transposed_convolution_of_16_channels_a_group_takes_the_phase_kernel(
    tmp_path: Path,
) -> None:
    """Four groups of 32 input and 16 output channels: one implicit GEMM per phase and group,
    its tiles 16 channels wide (one group's), K = 32 x 2 x 2 taps a phase."""
    conv = "ConvTranspose2d(128, 64, 4, stride=2, padding=1, groups=4)"
    _, designs, (options,) = plan(tmp_path, conv, 64, "8, 128, 24, 24")
    skills = [o.choice.skill for o in options.options]
    assert skills[0] == "conv-transposed-implicit-gemm", skills
    g = options.facts.gemm
    assert g is not None and (g.n, g.k, g.groups) == (64, 32 * 4, 4)
    assert options.options[0].choice.params["BLOCK_N"] == 16


def test_a_dilated_transposed_convolution_counts_the_taps_of_a_phase(tmp_path: Path) -> None:
    """Stride 2, dilation 2 (gcd 2): a phase's taps are every one of the 3 (half the phases
    read none), so K is 32 x 9; stride 3, dilation 2 (coprime): every third, K = 32 x 4."""
    for conv, k in (("ConvTranspose2d(32, 48, 3, stride=2, dilation=2)", 32 * 9),
                    ("ConvTranspose2d(32, 48, 4, stride=3, dilation=2)", 32 * 4)):
        _, designs, (options,) = plan(tmp_path, conv, 48, "2, 32, 12, 12")
        assert "conv-transposed-implicit-gemm" in [o.choice.skill for o in options.options]
        g = options.facts.gemm
        assert g is not None and g.k == k, (conv, g)


@pytest.mark.parametrize(
    ("conv", "shape", "skill", "gemm"),
    [
        ("Conv3d(16, 48, 3, padding=1)", "8, 16, 16, 24, 24", "conv-implicit-gemm",
         (8 * 16 * 24 * 24, 48, 16 * 27)),
        ("ConvTranspose3d(16, 48, 3, stride=2, padding=1)", "8, 16, 8, 12, 12",
         "conv-transposed-implicit-gemm", (8 * 15 * 23 * 23, 48, 16 * 8)),
    ],
    ids=["conv3d", "transposed3d"],
)
def test_a_3d_convolution_is_a_conv_group_on_channels_last_kernels(
    tmp_path: Path, conv: str, shape: str, skill: str, gemm: tuple[int, int, int]
) -> None:
    """A 3-D convolution and its epilogue are one group; its implicit GEMM's sizes count the
    depth; the implicit GEMM defaults to the channels-last kernel (the NCHW gathers are 2-D
    only) even under fp32; a grouped one (27 taps a value) has the direct kernel besides
    cuDNN."""
    scale = "self.scale.view(1, -1, 1, 1, 1)"
    body = f"F.leaky_relu(self.conv(x) * {scale}, 0.1)"
    part, designs, (options,) = plan(tmp_path, conv, 48, shape, body)
    assert [g.kind for g in part.groups] == ["conv"]
    g = options.facts.gemm
    assert g is not None and g.spatial == 3 and (g.m, g.n, g.k) == gemm
    assert [o.choice.skill for o in options.options] == [skill, "conv-vendor"]
    if skill == "conv-implicit-gemm":
        assert options.options[0].choice.params["CHANNELS_LAST"] == 1
    grouped = conv.replace("padding=1)", "padding=1, groups=16)")
    _, _, (options,) = plan(tmp_path, grouped, 48, shape, body)
    expected = {"conv-vendor", "conv-direct"} if skill == "conv-implicit-gemm" else {"conv-vendor"}
    assert {o.choice.skill for o in options.options} == expected
