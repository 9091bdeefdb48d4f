"""The team: a row held in registers by a team of programs that share its statistics
(design/families/reduction/team.py), checked against PyTorch under the interpreter.

The interpreter runs programs one after another, so a team of several programs would wait
forever there: the wrapper runs the team kernel only for rows of one slice and falls back to
the looped kernel otherwise. Both paths are checked here; teams of several programs, and the
synchronisation between them, are checked on the GPU (tests/gpu/test_team_gpu.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import (
    MASKED_ROW_VARIANT,
    designs_for,
    norm_task,
    softmax_rows_task,
    write_task,
)

# rows of 33123 (instance: 181 x 183) and 32883 (group: 3 channels x 97 x 113) elements, past
# the 32768 where the team applies; the instance norm's variant is shifted far from zero
# (Welford's partials must not cancel)
INSTANCE = norm_task(
    "InstanceNorm2d(2, affine=True)",
    "(1, 2, 181, 183)",
    "[[torch.randn(1, 2, 182, 181) * 3.0 + 1000.0]]",
)
GROUP = norm_task("GroupNorm(2, 6)", "(1, 6, 97, 113)")

SOFTMAX = softmax_rows_task("(2, 33000)", MASKED_ROW_VARIANT)

ONE_SLICE = {"TEAM_SLICE": 65536, "TEAM_WARPS": 4}  # each row is a team of one program
# teams of 9 programs (instance, softmax) or of 3 channels x 3 slices (group, whose slices lie
# in one channel each): the looped kernel on CPU
SLICES = {"TEAM_SLICE": 4096, "TEAM_WARPS": 4}


# the softmax's row takes the instance norm's path through the team of one (the kernel's
# fences and single load are asserted on both; the softmax's looped fallback runs below)
@pytest.mark.parametrize("body", [
    pytest.param(INSTANCE, id="instance"),
    pytest.param(SOFTMAX, id="softmax", marks=pytest.mark.slow),
])
def test_team_of_one_matches_torch(check, body: str) -> None:
    (src,) = check(body, skills=("row-team",), params=ONE_SLICE)
    kernel = src.split("_team_kernel(")[1].split("@triton.jit")[0]
    assert 'sem="release"' in kernel and 'sem="acquire"' in kernel
    # The interpreter cannot catch a missing fence (it runs one program at a time): a scalar
    # atomic runs in one thread, so barriers must order every thread's partial stores before
    # the release and the acquire before any thread's partial loads.
    release = kernel.index('sem="release"')
    last_partial = kernel.rindex("tl.store(ws_", 0, release)
    assert kernel.rindex("tl.debug_barrier()", 0, release) > last_partial
    acquire = kernel.index('sem="acquire"')
    assert acquire < kernel.index("tl.debug_barrier()", acquire) < kernel.index(".cg")
    # the slice is loaded once: the write uses the registers (the other loads, masked by row
    # or slot only: partials, the count, per-row affine parameters)
    loads = [ln for ln in kernel.splitlines() if "tl.load(" in ln and "col_mask" in ln]
    assert len(loads) == 1, loads


@pytest.mark.parametrize("body", [GROUP, SOFTMAX], ids=["group", "softmax"])
def test_team_larger_than_the_interpreter_runs_falls_back_to_the_looped_kernel(
    check, body: str
) -> None:
    (src,) = check(body, skills=("row-team",), params=SLICES)
    wrapper = src[src.index("def reduce_0(") :]
    assert "if n_split <= resident:" in wrapper and "_looped_kernel, " in wrapper


def test_team_is_offered_only_where_a_team_fits_on_the_gpu(tmp_path: Path) -> None:
    """Rows of 36864 elements: the team applies (and ranks first: one read of each row), rows
    that fit one block do not (the one-pass kernel reads them once without waiting); the
    condition that keeps a team resident refuses rows longer than SMs x 16384 elements."""
    from dataclasses import replace

    from kernelwright.design.facts import group_facts
    from kernelwright.skills.base import Condition
    from kernelwright.skills.conditions import check as run_check

    long_rows = norm_task("InstanceNorm2d(3, affine=True)", "(1, 3, 192, 192)")
    part, designs = designs_for(write_task(tmp_path, long_rows, "long"))
    assert designs[0].skills == ["row-team", "welford"]
    short_rows = norm_task("InstanceNorm2d(3, affine=True)", "(1, 3, 128, 256)")  # 32768
    _, short = designs_for(write_task(tmp_path, short_rows, "short"))
    assert short[0].skills == ["row-onepass", "welford"]
    assert all("row-team" not in d.skills for d in short)
    (group,) = [g for g in part.fused if g.kind == "reduction"]
    facts = group_facts(part, group)
    resident = Condition("team_resident", {"slice_max": 16384})
    assert run_check(resident, facts).ok
    too_long = replace(facts, reduced_length=facts.sm_count * 16384 + 1)
    outcome = run_check(resident, too_long)
    assert not outcome.ok and "cannot start" in outcome.reason
