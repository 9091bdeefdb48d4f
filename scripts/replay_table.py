"""Replay every tuning strategy on every measured space and print the BENCHMARKS.md tables.

    python scripts/replay_table.py --data ../shared/data/tuning --repeats 10 --jobs 2 \
        --dev convolution_A100,dedispersion_A100

Ask/tell strategies never see the budget, so one run of the largest budget is scored at every
smaller budget (its prefix is exactly the run that budget would give). Kernel Tuner's strategies
plan for their budget, so they run once per budget. Scores follow Kernel Tuner's methodology
(kernelwright.tuning.scoring): 0 = random search without replacement, 1 = the optimum.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads: BLAS threads only slow us

import argparse
import sys
import time
from multiprocessing import Pool
from pathlib import Path

OURS = ["random", "bo", "bo-discovered", "gp-default", "tpe"]
KERNEL_TUNER = [
    "kt-bayes_opt",
    "kt-genetic_algorithm",
    "kt-pso",
    "kt-simulated_annealing",
    "kt-dual_annealing",
    "kt-greedy_ils",
    "kt-diff_evo",
    "kt-firefly_algorithm",
]


def _job(
    args: tuple[str, str, int, tuple[int, ...], int, int],
) -> tuple[str, str, int, dict[int, tuple[float, float, float]], float]:
    strategy, csv_path, budget, budgets, repeats, seed = args
    from kernelwright.tuning.measured import load_measured_csv
    from kernelwright.tuning.replay import replay
    from kernelwright.tuning.strategies import get_strategy

    measured = load_measured_csv(csv_path)
    made = get_strategy(strategy)
    t0 = time.time()
    result = replay(measured, made, budget=budget, repeats=repeats, seed=seed)
    scores = {}
    for b in budgets if not hasattr(made, "drive") else [budget]:
        if b <= result.budget:
            s = result.at(b, measured)
            scores[b] = (s.score_mean, s.score_std, s.fraction_mean)
    return strategy, measured.name, budget, scores, time.time() - t0


def main() -> None:
    """Run the table and print it as Markdown."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", default="../shared/data/tuning", help="folder of measured-space CSVs"
    )
    parser.add_argument("--strategies", default=",".join(OURS + KERNEL_TUNER))
    parser.add_argument("--budgets", default="20,40,80")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--dev", default="", help="comma-separated space names used during development"
    )
    parser.add_argument(
        "--discovery-samples", type=int, default=60, help="0 skips the kernel table"
    )
    args = parser.parse_args()
    budgets = tuple(int(b) for b in args.budgets.split(","))
    spaces = sorted(Path(args.data).glob("*.csv"))
    strategies = [s for s in args.strategies.split(",") if s]
    dev = {s for s in args.dev.split(",") if s}

    from kernelwright.tuning.strategies import get_strategy

    jobs = []
    for name in strategies:
        drives = hasattr(get_strategy(name), "drive")
        for csv_path in spaces:
            for b in budgets if drives else [max(budgets)]:
                jobs.append((name, str(csv_path), b, budgets, args.repeats, args.seed))
    jobs.sort(key=lambda j: -j[2])  # long jobs first
    table: dict[tuple[str, str], dict[int, tuple[float, float, float]]] = {}
    t0 = time.time()
    with Pool(args.jobs) as pool:
        for strategy, space, _budget, scores, secs in pool.imap_unordered(_job, jobs):
            table.setdefault((strategy, space), {}).update(scores)
            print(
                f"  {strategy:24s} {space:24s} {sorted(scores)} {secs:6.1f}s",
                file=sys.stderr,
                flush=True,
            )
    print(f"total {time.time() - t0:.0f}s", file=sys.stderr)

    names = [p.stem for p in spaces]
    label = {n: f"{n} ({'dev' if n in dev else 'held out'})" if dev else n for n in names}
    held = [n for n in names if n not in dev] if dev else names
    print(
        f"Score vs random search (mean ± std over {args.repeats} runs; 0 = random, 1 = optimum)\n"
    )
    _print(
        table,
        strategies,
        names,
        budgets,
        label,
        held,
        lambda v: f"{v[0]:+.2f} ± {v[1]:.2f}",
        mean_key=0,
    )
    print("\nBest-found fraction of optimum (optimum / best found, mean over runs)\n")
    _print(table, strategies, names, budgets, label, held, lambda v: f"{v[2]:.3f}", mean_key=2)
    if args.discovery_samples:
        _kernel_table(spaces, args.discovery_samples, args.seed)


def _print(table, strategies, names, budgets, label, held, fmt, mean_key) -> None:  # type: ignore[no-untyped-def]
    head = ["strategy"] + [f"{label[n]} @{b}" for n in names for b in budgets]
    head.append(f"mean @40 over {'held-out' if len(held) < len(names) else 'all'}")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for s in strategies:
        cells = [s]
        for n in names:
            for b in budgets:
                v = table.get((s, n), {}).get(b)
                cells.append(fmt(v) if v else "–")
        vals = [table.get((s, n), {}).get(40) for n in held]
        cells.append(
            f"{sum(v[mean_key] for v in vals) / len(vals):.2f}" if all(vals) and vals else "–"
        )
        print("| " + " | ".join(cells) + " |")


def _kernel_table(spaces: list[Path], samples: int, seed: int) -> None:
    from kernelwright.tuning.compare import compare_kernels
    from kernelwright.tuning.measured import load_measured_csv

    print(
        f"\nKernels fitted on {samples} random configs that ran; "
        "CRPS of standardised log time (lower is better)\n"
    )
    print("| space | kernel | LOO-CRPS | held-out CRPS | expression |")
    print("|---|---|---|---|---|")
    for path in spaces:
        measured = load_measured_csv(path)
        for row in compare_kernels(measured, samples=samples, seed=seed):
            print(
                f"| {measured.name} | {row.label} | {row.loo_crps:.4f} | {row.test_crps:.4f} "
                f"| `{row.expression}` |"
            )


if __name__ == "__main__":
    main()
