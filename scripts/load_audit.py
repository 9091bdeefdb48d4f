"""Which emitted kernels move memory a value at a time: compile each task's first design for
Hopper (sm_90) on a machine without a GPU and count its global loads and stores, vector and
scalar, from the PTX.

A memory-bound kernel whose loads or stores are mostly scalar (4 bytes or less an instruction)
issues several times the instructions its bytes need; at full size that is often why it sits
below the copy bandwidth. Reasons seen: rows that start off 16-byte boundaries (an odd row
length), a modulus Triton cannot prove a multiple of 4 (positions of 126 x 126 pixels), and
per-channel operands loaded once per element of the tile.

    python scripts/load_audit.py kernelbench/level1_memory_bound.txt --out audit.csv
    python scripts/load_audit.py benchmarks/level2 --precision bf16 --out audit-bf16.csv

Arguments are task files, folders of them, or text files listing task paths (one a line, ``#``
comments). Each kernel's row is written to ``--out`` as soon as it is compiled, so an
interrupted audit keeps what it did; the kernels whose scalar accesses outnumber their vector
ones are listed at the end.
"""

from __future__ import annotations

import argparse
import csv
import sys
import warnings
from pathlib import Path

FIELDS = (
    "task",
    "skills",
    "kernel",
    "ok",
    "registers",
    "spill_bytes",
    "vector_loads",
    "scalar_loads",
    "vector_stores",
    "scalar_stores",
    "error",
)


def task_paths(args: list[str]) -> list[Path]:
    """Task files named by ``args``: files, folders (their ``*.py``) and lists of paths."""
    found: list[Path] = []
    for arg in args:
        p = Path(arg)
        if p.is_dir():
            found += sorted(x for x in p.rglob("*.py") if not x.stem.startswith("_"))
        elif p.suffix == ".txt":
            lines = (line.split("#")[0].strip() for line in p.read_text().splitlines())
            found += [Path(line) for line in lines if line]
        else:
            found.append(p)
    return found


def split_counts(counts: dict[str, int]) -> tuple[int, int]:
    """(vector, scalar) instruction counts of a ``global_loads``/``global_stores`` result."""
    vector = sum(n for form, n in counts.items() if ".v" in form)
    return vector, sum(counts.values()) - vector


def audit(path: Path, precision: str, size: str, arch: int) -> list[dict[str, object]]:
    """One row per kernel the task's first design launches."""
    from kernelwright.design.compile_check import compile_check, global_loads, global_stores
    from kernelwright.design.plan import plan_task
    from kernelwright.evaluate.precision import apply_policy
    from kernelwright.records import Precision
    from kernelwright.task import load_task

    plan = plan_task(load_task(path, size), "cuda", size, isolate=False, precision=precision)
    if not plan.designs:
        return [{"task": str(path), "error": "no design: no template applies"}]
    design = plan.designs[0]
    apply_policy(Precision(precision))
    rows: list[dict[str, object]] = []
    for r in compile_check(plan.render(design), path, size, arch, True, precision):
        vl, sl = split_counts(global_loads(r.ptx))
        vs, ss = split_counts(global_stores(r.ptx))
        rows.append({
            "task": str(path), "skills": " + ".join(design.skills), "kernel": r.kernel,
            "ok": r.ok, "registers": r.registers, "spill_bytes": r.spill_bytes,
            "vector_loads": vl, "scalar_loads": sl, "vector_stores": vs, "scalar_stores": ss,
            "error": r.error[:200],
        })
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="+", help="task files, folders or .txt lists of paths")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "tf32", "bf16"))
    parser.add_argument("--size", default="full", choices=("full", "small"))
    parser.add_argument("--arch", type=int, default=90, help="sm_<arch> (default 90: Hopper)")
    parser.add_argument("--out", required=True, type=Path, help="the CSV to write")
    args = parser.parse_args()
    paths = task_paths(args.tasks)
    missing = [p for p in paths if not p.is_file()]
    if missing:
        print(f"load_audit: no such task file: {missing[0]}", file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    flagged: list[str] = []
    with args.out.open("w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        writer.writeheader()
        for i, path in enumerate(paths, 1):
            try:
                rows = audit(path, args.precision, args.size, args.arch)
            except Exception as exc:  # one task's failure is a row, not the end of the audit
                rows = [{"task": str(path), "error": f"{type(exc).__name__}: {exc}"[:200]}]
            for row in rows:
                writer.writerow(row)
                scalar = int(row.get("scalar_loads") or 0) + int(row.get("scalar_stores") or 0)
                vector = int(row.get("vector_loads") or 0) + int(row.get("vector_stores") or 0)
                if scalar > vector:
                    flagged.append(f"{path.stem} {row['kernel']}: {scalar} scalar, {vector} "
                                   "vector accesses")
            f.flush()
            print(f"[{i}/{len(paths)}] {path.stem}: {len(rows)} kernel(s)", flush=True)
    print(f"rows: {args.out}")
    if flagged:
        print("mostly scalar:", *flagged, sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
