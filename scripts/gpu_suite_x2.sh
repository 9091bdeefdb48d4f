#!/usr/bin/env bash
# The whole memory-bound suite on an nvidia-h200-x2 machine in one call: one shard per GPU,
# the top design plus one tuning suggestion per task through the full harness. Rows land in
# $OUT/o0 and $OUT/o1 (optimize_suite.jsonl, each task's report and best.py).
set -u
export PYTHONPATH=src KERNELWRIGHT_PRESTART=2
common="--budget 1 --tune 1 --trials 2 --timeout 60 --min-task-s 15"
TAIL_LINES=${TAIL_LINES:-48} scripts/per_gpu.sh \
  "KERNELWRIGHT_HOME=/tmp/kw0 python scripts/gpu_optimize_suite.py --shard 1/2 $common --deadline ${DEADLINE0:-525} --out \$OUT/o0" \
  "KERNELWRIGHT_HOME=/tmp/kw1 python scripts/gpu_optimize_suite.py --shard 2/2 $common --deadline ${DEADLINE1:-500} --out \$OUT/o1"
