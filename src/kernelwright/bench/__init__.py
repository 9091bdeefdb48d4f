"""``kernelwright bench``: run a suite of tasks and report the field's metrics.

    plan(TASKS, SOLS) -> [BenchItem] -> run_bench(items, options) -> BenchRun
        -> summarise(results): fast_p, geometric means, median speed of light
        -> bench_document(run) (``--json``) -> kernelwright.report (``--report``)

Every function here is plain: the CLI (``kernelwright.cli.bench_cmd``) only parses options,
calls these and renders. Importing this package does not import torch.
"""

from kernelwright.bench.document import (
    DocumentWriter,
    bench_document,
    read_document,
    write_json,
)
from kernelwright.bench.journal import Journal, default_journal_path
from kernelwright.bench.metrics import (
    SUMMARY_KEYS,
    by_family,
    fast_p,
    fast_p_curve,
    geomean_speedup,
    median_sol_fraction,
    summarise,
)
from kernelwright.bench.results import BenchItem, BenchResult, Outcome
from kernelwright.bench.runner import BenchEvent, BenchRun, Shard, run_bench
from kernelwright.bench.steps import EvaluateStep, OptimizeStep, StepOutcome, TaskStep
from kernelwright.bench.suite import discover_tasks, pair_solutions, plan

__all__ = [
    "BenchEvent",
    "BenchItem",
    "BenchResult",
    "BenchRun",
    "DocumentWriter",
    "EvaluateStep",
    "Journal",
    "OptimizeStep",
    "Outcome",
    "SUMMARY_KEYS",
    "Shard",
    "StepOutcome",
    "TaskStep",
    "bench_document",
    "by_family",
    "default_journal_path",
    "discover_tasks",
    "fast_p",
    "fast_p_curve",
    "geomean_speedup",
    "median_sol_fraction",
    "pair_solutions",
    "plan",
    "read_document",
    "run_bench",
    "summarise",
    "write_json",
]
