#!/usr/bin/env bash
# Held-out tasks on one H200 (seventh session): an optional design-space sweep of some tasks,
# then `kernelwright optimize` (the harness, torch.compile timed) on a list of tasks.
#   SWEEP="07_rms_norm_features,10_min_middle_axis" TASKS="12_mean_short_rows,20_cross_entropy" \
#     bash scripts/gpu_heldout_s7.sh
# Logs and each task's report come back flat under $OUT (the device returns shallow paths only).
set -u
export PYTHONPATH=src KERNELWRIGHT_PRESTART=2
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/reports"
if [ -n "${SWEEP:-}" ]; then
  python scripts/gpu_schedule_sweep.py --root heldout --only "$SWEEP" --designs 1 \
    --configs "${CONFIGS:-30}" --deadline "${SWEEP_S:-240}" --out "$OUT/sweep" > "$OUT/sweep.log" 2>&1
  echo "sweep rc=$?"; tail -30 "$OUT/sweep.log"
fi
if [ -n "${TASKS:-}" ]; then
  KERNELWRIGHT_HOME=/tmp/kwh python scripts/gpu_optimize_suite.py --root heldout --only "$TASKS" \
    --compile --budget 1 --tune 1 --trials 2 --timeout 60 --min-task-s 15 \
    --deadline "${DEADLINE:-300}" --out "$OUT/h" > "$OUT/optimize.log" 2>&1
  echo "optimize rc=$?"
  for d in "$OUT"/h/optimize/*/; do cp "$d/report.md" "$OUT/reports/$(basename "$d").md" 2>/dev/null; done
  (dmesg 2>/dev/null | tail -20) > "$OUT/dmesg.txt"
  tail -40 "$OUT/optimize.log"
fi
