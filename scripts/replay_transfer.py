"""Replay a tuning strategy warm-started from a sibling space: the same kernel's parameters
measured on another GPU, as kernelwright's archive would hold them from an earlier run.

    python scripts/replay_transfer.py --data SPACES \\
        --pairs convolution_A100:convolution_A6000,dedispersion_A100:dedispersion_A4000 \\
        --strategy bo --prior-budget 40 --repeats 10 --out runs/transfer

For each pair SOURCE:TARGET and each repeat: one run of the strategy on SOURCE (``--prior-budget``
evaluations, the earlier run), then two runs on TARGET with the same seed: cold, and with
SOURCE's measurements as prior observations (they cost nothing from TARGET's budget). Scores
follow ``kernelwright.tuning.scoring`` (0 = random search without replacement, 1 = the optimum),
at every checkpoint up to ``--budget``. Writes OUT/runs.csv as runs finish (a crash keeps what
was done) and prints the markdown table last.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads: BLAS threads only slow us

import argparse
import csv
import sys
from pathlib import Path

FIELDS = ["source", "target", "repeat", "mode", "budget", "score", "best_ms", "optimum_ms"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, type=Path, help="folder of measured-space CSVs")
    ap.add_argument("--pairs", required=True, help="SOURCE:TARGET,... (space names)")
    ap.add_argument("--strategy", default="bo")
    ap.add_argument("--prior-budget", type=int, default=40)
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

    from kernelwright.errors import ConfigError
    from kernelwright.tuning.measured import load_measured_csv
    from kernelwright.tuning.replay import (
        ReplayResult,
        Run,
        checkpoints,
        repeat_seed,
        run_once,
        transferred,
    )
    from kernelwright.tuning.strategies import get_strategy

    try:
        pairs = [tuple(p.split(":")) for p in args.pairs.split(",") if p]
        if any(len(p) != 2 for p in pairs):
            raise ConfigError(f"--pairs {args.pairs!r}: expected SOURCE:TARGET,...")
        spaces = {name: load_measured_csv(args.data / f"{name}.csv")
                  for pair in pairs for name in pair}
        strategy = get_strategy(args.strategy)
        if hasattr(strategy, "drive"):
            raise ConfigError(f"--strategy {args.strategy}: plans its own runs and cannot take "
                              "prior measurements; use an ask/tell strategy (bo, tpe, ...)")
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    table: dict[tuple[str, str, int], list[float]] = {}
    with (args.out / "runs.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        writer.writeheader()
        for source_name, target_name in pairs:
            source, target = spaces[source_name], spaces[target_name]
            for r in range(args.repeats):
                seed = repeat_seed(args.seed, r)
                earlier, _ = run_once(source, strategy, args.prior_budget, seed)
                prior = transferred(source, target, earlier, source_name)
                for mode, given in (("cold", ()), ("warm", prior)):
                    rows, times = run_once(target, strategy, args.budget, seed, prior=given)
                    result = ReplayResult(target_name, strategy.name, len(rows), seed,
                                          target.best_ms, (Run(r, tuple(rows), tuple(times), 0.0),))
                    for b in checkpoints(len(rows)):
                        at = result.at(b, target)
                        table.setdefault((target_name, mode, b), []).append(at.score_mean)
                        writer.writerow({"source": source_name, "target": target_name,
                                         "repeat": r, "mode": mode, "budget": b,
                                         "score": f"{at.score_mean:.4f}",
                                         "best_ms": f"{at.best_ms_mean:.5g}",
                                         "optimum_ms": f"{target.best_ms:.5g}"})
                    fh.flush()
                print(f"{source_name} -> {target_name}: repeat {r + 1}/{args.repeats}", flush=True)
    budgets = sorted({b for (_, _, b) in table})
    print(f"\n| target (prior from) | mode | {' | '.join(f'@{b}' for b in budgets)} |")
    print("|---|---|" + "---|" * len(budgets))
    for source_name, target_name in pairs:
        for mode in ("cold", "warm"):
            cells = []
            for b in budgets:
                xs = table.get((target_name, mode, b), [])
                if xs:
                    mean = sum(xs) / len(xs)
                    sd = (sum((x - mean) ** 2 for x in xs) / len(xs)) ** 0.5
                    cells.append(f"{mean:+.2f} ± {sd:.2f}")
                else:
                    cells.append("-")
            print(f"| {target_name} ({source_name}) | {mode} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
