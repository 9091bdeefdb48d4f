#!/usr/bin/env bash
# One x2 call (fifth session): the chained column scan and the table lookups on the GPU.
#   GPU 0: the chained scan's GPU tests (look-backs that really wait), a sweep of the masked
#          cumulative sum's first two designs (chained, column walk), then the harness on it and
#          on the rotary embedding (whose cos/sin lookups are now loaded inside its kernels)
#   GPU 1: the team's and the harness's GPU tests, then sweeps of the rotary embedding and of
#          the two one-pass losses whose tile size is in question (KL, smoothed cross-entropy)
set -u
export PYTHONPATH=src KERNELWRIGHT_PRESTART=2
sweep="python scripts/gpu_schedule_sweep.py"
harness="python scripts/gpu_optimize_suite.py --budget 1 --tune 0 --trials 2 --timeout 60"
scripts/per_gpu.sh \
  "timeout 150 python -m pytest -q tests/gpu/test_scan_chained_gpu.py 2>&1 | tail -8; timeout 230 $sweep --only 21_cumsum_masked_time --designs 2 --configs 24 --deadline 210 --out \$OUT/sweep0; KERNELWRIGHT_HOME=/tmp/kw0 timeout 170 $harness --only 21_cumsum_masked_time,02_rotary_embedding --deadline 160 --out \$OUT/o0" \
  "timeout 200 python -m pytest -q tests/gpu/test_team_gpu.py tests/gpu/test_harness_gpu.py 2>&1 | tail -8; timeout 330 $sweep --only 02_rotary_embedding,29_kl_div_distill,28_cross_entropy_smoothed --designs 1 --configs 16 --deadline 320 --out \$OUT/sweep1"
