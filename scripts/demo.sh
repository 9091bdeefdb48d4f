#!/usr/bin/env bash
# The main job on a fresh machine: optimise the bundled softmax example and verify the result.
# Without a GPU, Triton runs through its interpreter at the example's small size.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export KERNELWRIGHT_HOME="${KERNELWRIGHT_HOME:-$PWD/runs/home}"
out_dir="${1:-runs/demo}"
kernelwright optimize examples/softmax/task.py --out "$out_dir" --budget-candidates 6
kernelwright eval examples/softmax/task.py "$out_dir/best.py"
echo "best kernel: $out_dir/best.py    report: $out_dir/report.md"
