"""Replay every tuning strategy on every measured space of a folder; write the tables as markdown.

    python scripts/replay_table.py --data data/tuning --repeats 10 --jobs 2 --out replay.md
    python scripts/replay_table.py --data SPACES --dev convolution_A100,dedispersion_A100 \
        --out replay.md

``--data`` is a folder of measured-space CSVs (the format of ``data/tuning``, which bundles one
space; the full set is Kernel Tuner's benchmark_hub, converted the same way). ``--dev`` names the
spaces used while designing the strategies; the others are reported as held out.

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
    parser.add_argument("--data", required=True, help="folder of measured-space CSVs")
    parser.add_argument("--out", default=None, help="write the tables here (default: stdout)")
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
    lines: list[str] = []
    budgets = tuple(int(b) for b in args.budgets.split(","))
    spaces = sorted(Path(args.data).glob("*.csv"))
    if not spaces:
        parser.error(f"--data {args.data}: no measured-space CSV files there")
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
    lines.append(
        f"Score vs random search (mean ± std over {args.repeats} runs; 0 = random, 1 = optimum)\n"
    )
    lines += _rows(
        table,
        strategies,
        names,
        budgets,
        label,
        held,
        lambda v: f"{v[0]:+.2f} ± {v[1]:.2f}",
        mean_key=0,
    )
    lines.append("\nBest-found fraction of optimum (optimum / best found, mean over runs)\n")
    lines += _rows(table, strategies, names, budgets, label, held, lambda v: f"{v[2]:.3f}", 2)
    if args.discovery_samples:
        lines += _kernel_table(spaces, args.discovery_samples, args.seed)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text, end="")


def _rows(table, strategies, names, budgets, label, held, fmt, mean_key) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    head = ["strategy"] + [f"{label[n]} @{b}" for n in names for b in budgets]
    head.append(f"mean @40 over {'held-out' if len(held) < len(names) else 'all'}")
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
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
        out.append("| " + " | ".join(cells) + " |")
    return out


def _kernel_table(spaces: list[Path], samples: int, seed: int) -> list[str]:
    from kernelwright.tuning.compare import compare_kernels
    from kernelwright.tuning.measured import load_measured_csv

    out = [
        f"\nKernels fitted on {samples} random configs that ran; "
        "CRPS of standardised log time (lower is better)\n",
        "| space | kernel | LOO-CRPS | held-out CRPS | expression |",
        "|---|---|---|---|---|",
    ]
    for path in spaces:
        measured = load_measured_csv(path)
        for row in compare_kernels(measured, samples=samples, seed=seed):
            out.append(
                f"| {measured.name} | {row.label} | {row.loo_crps:.4f} | {row.test_crps:.4f} "
                f"| `{row.expression}` |"
            )
    return out


if __name__ == "__main__":
    main()
