"""Split statistics: partial statistics per slice of a row, then a kernel that combines a row's
partials and writes its slice (design/families/reduction/split_stats.py), checked against
PyTorch under the interpreter, and the rule that offers it (few rows, long rows)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from design_checks import (
    MASKED_ROW_VARIANT,
    designs_for,
    forward_task,
    norm_task,
    softmax_rows_task,
    write_task,
)

from kernelwright.skills import SkillLibrary
from kernelwright.skills.conditions import GroupFacts, check

# rows of 68120 (4 x 130 x 131) to 70001 elements, past the 65536 where the split statistics
# apply, two or three of them; the layer norm's input is shifted far from zero (Welford's
# partials must not cancel; the plain layer norm below checks an input near zero)
LAYER_NORM = norm_task("LayerNorm((4, 130, 131))", "(2, 4, 130, 131) * 3.0 + 1000.0")
LAYER_NORM_PLAIN = forward_task(
    "return F.layer_norm(x, x.shape[1:])", "torch.randn(2, 68120) * 2.0 + 5.0"
)
RMS_NORM = forward_task(
    "return x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + 1e-5)",
    "torch.randn(2, 70001)",
)
SOFTMAX = softmax_rows_task("(2, 70001)", MASKED_ROW_VARIANT)
LOG_SOFTMAX = forward_task("return torch.log_softmax(x, dim=-1)", "torch.randn(2, 68120) * 4.0")
# a group norm's rows: 3 channels of 150 x 151 (its weight varies by channel: the write sweep
# nests a loop over channels, and a slice holds whole channels)
GROUP_NORM = norm_task("GroupNorm(2, 6)", "(1, 6, 150, 151)")

# three slices a row, the last one partial (68120 = 2 x 32768 + 2584) and ending inside a block
# (2584 is not a multiple of 1024); few programs, each a loop over its slice under the
# interpreter
SMALL = {"SLICE": 32768, "LOOP_BLOCK": 1024, "LOOP_WARPS": 4}


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(LAYER_NORM, id="layer-norm"),
        # the layer norm's statistics, written without an affine map as the softmax's are
        pytest.param(LAYER_NORM_PLAIN, id="layer-norm-no-affine", marks=pytest.mark.slow),
        pytest.param(RMS_NORM, id="rms-norm"),
        pytest.param(SOFTMAX, id="softmax"),
        pytest.param(LOG_SOFTMAX, id="log-softmax"),
        pytest.param(GROUP_NORM, id="group"),
    ],
)
def test_split_stats_match_torch(check, body: str) -> None:
    (src,) = check(body, skills=("row-split-stats",), params=SMALL)
    wrapper = src[src.index("def reduce_0(") :]
    assert "_stats_kernel, grid," in wrapper and "_write_kernel, grid," in wrapper
    kernels = src[src.index("_stats_kernel(") : src.index("def reduce_0(")]
    # two launches order the kernels: nothing inside them waits or synchronises
    assert "atomic" not in kernels and "volatile" not in kernels and ".cg" not in kernels


def facts(**kw: object) -> GroupFacts:
    """A layer norm over (64, 256, 256) of a batch of 16, its statistics folded by Welford."""
    base: dict[str, object] = dict(
        kind="reduction",
        schedule="row",
        domain=(16, 64, 256, 256),
        reduced_length=64 * 256 * 256,
        parallel_length=16,
        n_passes=3,
        folded_passes=2,
        welford_pattern=True,
        stats_then_write=True,
        full_outputs=True,
    )
    return GroupFacts(**{**base, **kw})  # type: ignore[arg-type]


def reasons(f: GroupFacts, skill: str) -> tuple[bool, list[str]]:
    (a,) = [a for a in SkillLibrary.builtin().assess(f) if a.skill.id == skill]
    return a.ok, list(a.reasons)


def test_split_stats_apply_to_few_long_rows_only() -> None:
    """Fewer rows than two per SM, each of 65536 elements or more: one program a row leaves
    SMs idle and a team cannot hold the row; many rows, or short ones, are left to the others."""
    ok, why = reasons(facts(), "row-split-stats")
    assert ok and "16 rows < 2 x 132 SMs, rows of 4194304 >= 65536" in " ".join(why)
    ok, why = reasons(facts(parallel_length=264), "row-split-stats")
    assert not ok and why == ["264 rows >= 2 x 132 SMs: one program a row fills the GPU"]
    ok, why = reasons(facts(reduced_length=32768), "row-split-stats")
    assert not ok and "rows of 32768 < 65536" in why[0]
    ok, why = reasons(facts(sm_count=8), "row-split-stats")
    assert not ok and "16 rows >= 2 x 8 SMs" in why[0]
    ok, _ = reasons(facts(stats_then_write=False), "row-split-stats")
    assert not ok
    ok, _ = reasons(facts(schedule="column"), "row-split-stats")
    assert not ok


def test_split_stats_default_slices_fill_the_gpu_four_times() -> None:
    from kernelwright.skills.heuristics import defaults_for

    assert defaults_for("split_stats", facts())["SLICE"] == 65536  # 16 x 64 >= 4 x 132
    short = defaults_for("split_stats", facts(reduced_length=70000, parallel_length=8))
    assert short["SLICE"] == 8192  # 8 rows x 9 slices: the smallest slice
    lib = SkillLibrary.builtin()
    skill = lib.get("row-split-stats")
    assert skill.satisfies(lib.defaults(skill, facts()))


def test_split_stats_rank_first_where_no_team_fits(tmp_path: Path) -> None:
    """Two rows of 3,000,000 elements (more than 132 SMs x 16384: no resident team): the split
    statistics rank above the relay and the looped kernel (both fill the GPU no better or read
    no less); rows a team holds read once there, so the team ranks first; many rows: not
    offered. (Planning only: the numbers are checked above.)"""
    long_rows = forward_task("return F.layer_norm(x, x.shape[1:])", "torch.randn(2, 3000000)")
    _, designs = designs_for(write_task(tmp_path, long_rows, "long"))
    order = [d.skills for d in designs]
    assert order[0] == ["row-split-stats", "welford"]
    assert order.index(["row-relay", "welford"]) > 0
    _, designs = designs_for(write_task(tmp_path, LAYER_NORM, "team"))
    order = [d.skills for d in designs]
    assert order[0] == ["row-team", "welford"] and ["row-split-stats", "welford"] in order
    # 300 rows >= 2 x 132 SMs
    many = forward_task("return F.layer_norm(x, x.shape[1:])", "torch.randn(300, 70000)")
    _, designs = designs_for(write_task(tmp_path, many, "many"))
    assert all("row-split-stats" not in d.skills for d in designs)


def test_modifiers_refine_the_split_stats() -> None:
    lib = SkillLibrary.builtin()
    for modifier in ("welford", "online-softmax"):
        assert "split-stats" in lib.get(modifier).modifies
    assert check(lib.get("row-split-stats").conditions[2], replace(facts(), parallel_length=1))
