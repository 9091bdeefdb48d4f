"""Groups whose kernels are the same code up to names launch one kernel."""

from __future__ import annotations

import re

from kernelwright.design.kernel.common import RenderedKernel
from kernelwright.design.shared_kernels import share_kernels

KERNEL = '''@triton.jit
def {name}(x_ptr, {out}_ptr, n, {hint}: tl.constexpr, BLOCK: tl.constexpr):
    """{doc}"""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    {val} = tl.load(x_ptr + offs, mask=offs < n // {hint} * {hint})
    tl.store({out}_ptr + offs, {val} * {scale}, mask=offs < n)'''

WRAPPER = '''def {group}(x):
    {out} = torch.empty_like(x)
    {name}[(_cdiv(x.numel(), 128),)](x, {out}, x.numel(), {hint}=_align(x.numel()), BLOCK=128)
    return {out},'''


def _group(gid: int, scale: str = "2.0", hint: str | None = None) -> RenderedKernel:
    names = {"name": f"g{gid}_kernel", "out": f"y{gid}", "val": f"v{gid}",
             "hint": hint or f"Y{gid}_N_ALIGN", "doc": f"group {gid}", "scale": scale}
    return RenderedKernel((KERNEL.format(**names),),
                          WRAPPER.format(group=f"g{gid}", **names), f"g{gid}", ("x",),
                          (f"y{gid}",))


def test_a_group_whose_kernel_is_an_earlier_one_up_to_names_launches_that_one() -> None:
    shared = share_kernels([(0, _group(0)), (1, _group(1))])
    assert shared[0] == _group(0)  # the first keeps its kernel and wrapper
    assert shared[1].kernels == ()
    wrapper = shared[1].wrapper
    assert "g0_kernel[(" in wrapper and "g1_kernel[(" not in wrapper
    # its constexpr passed by keyword takes the twin's name; its own values keep theirs
    assert "Y0_N_ALIGN=_align(x.numel())" in wrapper and "y1 = torch.empty_like(x)" in wrapper
    assert wrapper.startswith("# g1_kernel: the same code as g0_kernel")


def test_kernels_that_compute_differently_are_kept() -> None:
    shared = share_kernels([(0, _group(0)), (1, _group(1, scale="3.0"))])
    assert len(shared[1].kernels) == 1 and "g1_kernel[(" in shared[1].wrapper


def test_a_twin_name_that_already_means_something_in_the_wrapper_keeps_the_kernel() -> None:
    # group 1's wrapper already uses the name group 0's hint has
    mine = _group(1)
    clash = RenderedKernel(mine.kernels, "Y0_N_ALIGN = 1\n" + mine.wrapper, mine.wrapper_name,
                           mine.args, mine.outputs)
    shared = share_kernels([(0, _group(0)), (1, clash)])
    assert shared[1] == clash


def test_text_that_is_not_one_function_is_kept_as_it_is() -> None:
    odd = RenderedKernel(("CONFIGS = [1, 2]\n\n" + KERNEL.format(
        name="g1_kernel", out="y1", val="v1", hint="H", doc="", scale="2.0"),), "def g1(x): pass",
        "g1", ("x",), ("y1",))
    assert share_kernels([(0, _group(0)), (1, odd)])[1] == odd


TWO_NORMS = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.LayerNorm(48)
        self.second = nn.LayerNorm(48)
    def forward(self, x, y):
        return self.first(x), self.second(y)
def get_inputs():
    return [torch.randn(6, 48), torch.randn(5, 48)]
def get_init_inputs():
    return []
"""


def test_repeated_blocks_emit_one_kernel_and_still_compute_the_model(check) -> None:
    # two layer norms of one width on two inputs (two groups): the second group launches the
    # first's kernel, and the design matches PyTorch under the interpreter
    src = check(TWO_NORMS, skills=("row-onepass",))[0]  # every design checked, the best read
    defined = re.findall(r"^def (\w+)\(", src, re.MULTILINE)
    assert "reduce_0_kernel" in defined and "reduce_1" in defined  # the second group's wrapper
    assert not any(d.startswith("reduce_1_") for d in defined)  # but none of its kernels
    assert "# reduce_1_kernel: the same code as reduce_0_kernel" in src


def test_a_group_s_kept_kernels_follow_the_names_its_wrapper_takes() -> None:
    """A group of two variants whose second is an earlier group's code: its first (kept) takes
    the twin's hint name with its wrapper, and a later copy of the group shares both."""

    def variants(gid: int) -> RenderedKernel:
        fmt = {"out": f"y{gid}", "val": f"v{gid}", "hint": f"Y{gid}_N_ALIGN", "doc": ""}
        tma = KERNEL.format(name=f"g{gid}_tma_kernel", scale="3.0", **fmt)
        plain = KERNEL.format(name=f"g{gid}_kernel", scale="2.0", **fmt)
        wrapper = (WRAPPER.format(group=f"g{gid}", name=f"g{gid}_kernel", **fmt) + "\n"
                   + WRAPPER.format(group=f"g{gid}_tma", name=f"g{gid}_tma_kernel", **fmt))
        return RenderedKernel((tma, plain), wrapper, f"g{gid}", ("x",), (f"y{gid}",))

    shared = share_kernels([(0, _group(0)), (1, variants(1)), (2, variants(2))])
    (tma,) = shared[1].kernels
    assert "def g1_tma_kernel(" in tma and "Y0_N_ALIGN: tl.constexpr" in tma
    assert "Y1_N_ALIGN" not in tma + shared[1].wrapper
    assert shared[2].kernels == ()  # both of its kernels are group 1's (or group 0's) code
    assert "g1_tma_kernel[(" in shared[2].wrapper and "g0_kernel[(" in shared[2].wrapper
    assert "Y0_N_ALIGN=_align" in shared[2].wrapper and "Y2_N_ALIGN" not in shared[2].wrapper
