"""Losses: element-wise terms, per-row reductions (cross-entropy, KL) and whole-tensor reductions,
in one pass, looped and split (two-stage) schedules."""

from __future__ import annotations

import pytest

# blocks of 64: rows of 100 and 131 take two and three (the last masked); 8 programs split a
# whole tensor
SPLIT = {"LOOP_BLOCK": 64, "LOOP_COLS": 8, "SPLIT_PROGRAMS": 8}

LOSSES = {
    "mse": ("F.mse_loss(a, b)", "torch.randn(37, 100), torch.randn(37, 100)"),
    "huber": (
        'F.huber_loss(a, b, reduction="mean", delta=1.0)',
        "torch.randn(3, 37, 20), torch.randn(3, 37, 20)",
    ),
    "cross_entropy": (
        "F.cross_entropy(a, b, label_smoothing=0.1)",
        "torch.randn(37, 10), torch.randint(0, 10, (37,))",
    ),
    "cross_entropy_ignore": (
        "F.cross_entropy(a, b, ignore_index=-100)",
        "torch.randn(19, 131), "
        "torch.where(torch.rand(19) < 0.2, -100, torch.randint(0, 131, (19,)))",
    ),
    "kl": (
        'F.kl_div(F.log_softmax(a, dim=-1), b, reduction="batchmean")',
        "torch.randn(37, 100), torch.softmax(torch.randn(37, 100), dim=-1)",
    ),
}


def loss_task(expr: str, inputs: str) -> str:
    return f"""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, a, b):
        return {expr}
def get_inputs():
    return [{inputs}]
def get_init_inputs():
    return []
"""


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses(check, name: str) -> None:
    check(loss_task(*LOSSES[name]), params=SPLIT)


def test_whole_tensor_losses_split_across_programs(check) -> None:
    body = loss_task(*LOSSES["mse"]).replace("37, 100", "64, 200")
    (src,) = check(body, skills=("split-reduction",), params=SPLIT)
    assert "_partial_kernel" in src and "_combine_kernel" in src


def test_cosine_similarity_loss_reads_each_row_once(check) -> None:
    # PyTorch's cosine_similarity clamps each norm by a scalar_tensor (aten.clamp.Tensor): with
    # no template for it, the norms, the clamps and the dot product were four kernels reading
    # the inputs twice (46% of the bytes floor on the H200). Fused, the two norms and the dot
    # product of the normalised rows are one kernel: the rows are loaded once.
    body = loss_task("torch.mean(1 - F.cosine_similarity(a, b, dim=1))", LOSSES["mse"][1])
    sources = check(body, skills=("row-onepass",), params=SPLIT)
    assert sources
    for src in sources:
        # two kernels: the rows' (norms, clamps, dot product), then the mean; no framework call
        assert src.count("# ==== g") == 2, src[:2000]
        assert "no template" not in src
