#!/usr/bin/env bash
# The main job on a fresh machine: optimise the bundled softmax example and verify the result.
# Without a GPU, Triton runs through its interpreter at the example's small size.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export KERNELWRIGHT_HOME="${KERNELWRIGHT_HOME:-$PWD/runs/home}"
OUT="${1:-runs/demo}"
kernelwright optimize examples/softmax/task.py --out "$OUT" --budget-candidates 6
kernelwright eval examples/softmax/task.py "$OUT/best.py"
echo "best kernel: $OUT/best.py    report: $OUT/report.md"
