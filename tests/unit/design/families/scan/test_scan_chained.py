"""The chained column scan (design/families/scan/template.py, skill ``scan-chained``): the
scanned axis cut into chunks, one program each, every chunk finding its prefix by looking back
over the chunks before it. Checked against PyTorch under the interpreter, which runs programs
one after another (every earlier chunk has finished when a program looks back); the waits
themselves, and the fences around the one-thread atomics, are checked on the GPU
(tests/gpu/test_scan_chained_gpu.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from design_checks import designs_for, scan_task, with_params, write_task

# 300 steps (past the 256 where the skill applies) of a few positions: chunks of 16 steps and
# blocks of 8 positions make 19 chunks x 4 column blocks (2 x 9 positions), the last chunk and
# block partial
CASES = {
    # the mask is called ``state``, as one of the kernel's own variables (it gets a suffix)
    "masked-sum": (
        "torch.cumsum(x * state.unsqueeze(-1), dim=1)",
        ", state",
        "torch.randn(2, 300, 9), torch.rand(2, 300) < 0.7",
        "torch.randn(3, 37, 9), torch.rand(3, 37) < 0.5",
    ),
    "reverse-sum": (
        "torch.flip(torch.cumsum(torch.flip(x, dims=[1]), dim=1), dims=[1])",
        "",
        "torch.randn(2, 300, 9)",
        "torch.randn(1, 257, 3)",
    ),
    "product": (
        "torch.cumprod(x, dim=1)",
        "",
        "torch.rand(2, 300, 9) * 0.02 + 0.99",
        "torch.rand(2, 40, 7) * 0.5 + 0.75",
    ),
    "exclusive-sum": (  # each chunk loads its steps' predecessors (the first step: 0)
        "torch.cat([torch.zeros_like(x.narrow(1, 0, 1)), "
        "torch.cumsum(x.narrow(1, 0, x.size(1) - 1), dim=1)], dim=1)",
        "",
        "torch.randn(2, 300, 9)",
        "torch.randn(1, 257, 3)",
    ),
    "integer-sum": (
        "torch.cumsum(x, dim=1)",
        "",
        "torch.randint(-9, 10, (2, 300, 9))",
        "torch.randint(-9, 10, (1, 99, 33))",
    ),
}
CHUNKS = {"BLOCK_S": 16, "COLS": 8, "WARPS": 1}


@pytest.mark.parametrize("case", sorted(CASES))
def test_chained_scan_matches_torch(check, case: str) -> None:
    expr, extra_arg, inputs, variant = CASES[case]
    body = scan_task(expr, extra_arg, inputs, variant)
    (src,) = check(body, skills=("scan-chained",), params=CHUNKS)
    kernel = src[src.index("def scan_0_kernel(") : src.index("def scan_0(")]
    # each chunk is loaded once and written from registers: no walk over the scanned axis
    assert "for start in" not in kernel
    assert kernel.count("tl.load(x_ptr") == 1
    if "flip" in expr:
        assert "torch.flip" not in src and "reverse=True" not in kernel


def test_chained_scan_fences_its_atomics(tmp_path: Path) -> None:
    """The interpreter cannot catch a missing fence: a scalar atomic runs in one thread, so a
    barrier must order every thread's stores before each releasing flag, and each acquiring
    read of a flag before any thread's loads of what it announces. (The emitted source only:
    test_chained_scan_matches_torch[masked-sum] runs this same file.)"""
    from kernelwright.design.emit import emit

    expr, extra_arg, inputs, variant = CASES["masked-sum"]
    path = write_task(tmp_path, scan_task(expr, extra_arg, inputs, variant))
    part, designs = designs_for(path)
    (design,) = [d for d in designs if "scan-chained" in d.skills]
    src = emit(part, with_params(design, CHUNKS), path.read_text(), task_name="t", size="small")
    kernel = src[src.index("def scan_0_kernel(") : src.index("def scan_0(")]
    for flag in (
        'tl.atomic_xchg(flags_ptr + slot, 1, sem="release")',
        'tl.atomic_xchg(flags_ptr + slot, 2, sem="release")',
    ):
        release = kernel.index(flag)
        last_store = kernel.rindex("tl.store(ws_ptr", 0, release)
        assert last_store < kernel.rindex("tl.debug_barrier()", 0, release)
    acquire = kernel.index('sem="acquire"')
    assert acquire < kernel.index("tl.debug_barrier()", acquire) < kernel.index(".cg", acquire)
    # the tickets order the chunks, not the program ids
    assert "tl.program_id" not in kernel and "ticket = tl.atomic_add(" in kernel


def test_chained_scan_is_ranked_first_only_where_positions_are_few(tmp_path: Path) -> None:
    """Few positions and a long scan: the chained scan ranks first (the column walk alone
    would leave the GPU idle); a short scan is not cut, and many positions keep the walk."""
    from dataclasses import replace

    from kernelwright.design.facts import group_facts
    from kernelwright.skills.base import Condition
    from kernelwright.skills.conditions import check as run_check

    expr, extra_arg, inputs, variant = CASES["masked-sum"]
    long_scan = scan_task(expr, extra_arg, inputs, variant)
    part, designs = designs_for(write_task(tmp_path, long_scan, "long"))
    assert designs[0].skills == ["scan-chained"]
    assert any(d.skills == ["scan-columns"] for d in designs)
    short = scan_task(expr, extra_arg, "torch.randn(2, 255, 20), torch.rand(2, 255) < 0.7", variant)
    _, short_designs = designs_for(write_task(tmp_path, short, "short"))
    assert all("scan-chained" not in d.skills for d in short_designs)
    (group,) = part.fused
    facts = group_facts(part, group)
    few = Condition("few_outputs", {"per_sm": 1024})
    assert run_check(few, facts).ok
    many = replace(facts, parallel_length=facts.sm_count * 1024 + 1)
    assert not run_check(few, many).ok
