"""The benchmark suite under ``benchmarks/``: every task loads, runs small on the CPU, and is sane.
The held-out tasks under ``heldout/`` follow the same rules and get the same per-task checks.

The checks are ``kernelwright.task.suite_checks`` (``kernelwright check-task --suite``); this file
runs them per task, in this process, so a failure names the task.
"""

import time
from pathlib import Path

import pytest
import torch

from kernelwright.bench.suite import discover_tasks
from kernelwright.task import load_task, task_options
from kernelwright.task import suite_checks as check_suite
from kernelwright.task.estimate import estimate, variant_bytes

ROOT = Path(__file__).resolve().parents[2]

TASKS = discover_tasks([ROOT / "benchmarks"])
IDS = [f"{p.parent.name}/{p.stem}" for p in TASKS]
HELDOUT = discover_tasks([ROOT / "heldout"])
EVERY = TASKS + HELDOUT  # the per-task checks
EVERY_IDS = IDS + [f"heldout/{p.stem}" for p in HELDOUT]

# What the suite must cover, as (level, family) -> minimum number of tasks.
REQUIRED = {
    ("level1", "elementwise"): 3,
    ("level1", "softmax"): 2,
    ("level1", "norm"): 7,
    ("level1", "reduction"): 4,
    ("level1", "scan"): 4,
    ("level1", "pool"): 3,
    ("level1", "loss"): 4,
    ("level1", "gemm"): 5,
    ("level1", "attention"): 3,
    ("level2", "gemm_epilogue"): 4,
    ("level2", "conv_epilogue"): 2,
    ("level3", "block"): 4,
    ("serving", "serving"): 5,
}


@pytest.fixture(autouse=True)
def one_thread():
    # Tiny CPU ops on a busy 2-core machine wait milliseconds for a second OpenMP thread.
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def test_suite_size_and_unique_ids():
    assert len(TASKS) >= 48
    assert check_suite.duplicate_ids(TASKS) == []
    for path in TASKS:
        assert path.stem[:2].isdigit() and path.stem[2] == "_", path


def test_suite_covers_every_family_it_promises():
    counts: dict[tuple[str, str], int] = {}
    for path in TASKS:
        family = task_options(load_task(path))["family"]
        counts[(path.parent.name, family)] = counts.get((path.parent.name, family), 0) + 1
    short = {k: (counts.get(k, 0), n) for k, n in REQUIRED.items() if counts.get(k, 0) < n}
    assert short == {}, f"(have, need) per (level, family): {short}"


def test_heldout_tasks_cover_every_family_and_are_named_apart_from_the_suite():
    assert len(HELDOUT) >= 20
    assert check_suite.duplicate_ids(HELDOUT) == []
    assert not {p.stem for p in HELDOUT} & {p.stem for p in TASKS}
    families = {task_options(load_task(p))["family"] for p in HELDOUT}
    assert families == {"elementwise", "softmax", "norm", "reduction", "scan", "pool", "loss",
                        "gemm_epilogue", "attention", "conv_epilogue", "block"}


def test_enough_tasks_have_input_variants():
    with_variants = [p for p in TASKS if load_task(p).has_variants]
    families = {task_options(load_task(p))["family"] for p in with_variants}
    assert len(with_variants) >= 6
    assert len(families) >= 5


@pytest.mark.parametrize("path", EVERY, ids=EVERY_IDS)
def test_task_loads_with_a_family(path):
    task = load_task(path, size="small")
    options = task_options(task)
    assert options["family"] in check_suite.FAMILIES
    assert isinstance(options["small"], dict) and options["small"]
    assert task.name == path.stem


@pytest.mark.parametrize("path", EVERY, ids=EVERY_IDS)
def test_task_runs_small_on_cpu(path):
    start = time.perf_counter()
    result = check_suite.check_small(path)
    elapsed = time.perf_counter() - start
    assert result.problems == []
    assert result.ms < check_suite.SMALL_BUDGET_MS
    assert elapsed < 5.0  # every check together, including bf16 and the trial transforms


@pytest.mark.parametrize("path", EVERY, ids=EVERY_IDS)
def test_full_size_fits_without_allocating(path):
    est = estimate(path, "full")  # meta device: shapes only
    assert 0 < est.bytes <= check_suite.MAX_FULL_BYTES
    assert est.eager_ms > 0
    assert all(v <= est.bytes for v in variant_bytes(path, "full"))


_BROKEN = """
import torch
import torch.nn as nn

n = 64
KERNELWRIGHT = {"family": "elementwise", "small": {"n": 5}}


class Model(nn.Module):
    def forward(self, x):
        return BODY


def get_inputs():
    return [torch.randn(n, n)]


def get_init_inputs():
    return []
"""


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("torch.ones_like(x)", "is constant"),
        ("x * 0", "near zero"),
        ("torch.log(x)", "non-finite"),
        ("x.sum() * 0 + torch.arange(3.0, device=x.device)", "same for inputs of two seeds"),
        ("x.add_(1)", "mutates its inputs"),
    ],
)
def test_checker_catches_degenerate_tasks(tmp_path, body, problem):
    path = tmp_path / "01_broken.py"
    path.write_text(_BROKEN.replace("BODY", body))
    result = check_suite.check_small(path)
    assert any(problem in p for p in result.problems), result.problems
