#!/usr/bin/env bash
# One x2 call (fifth session): the one-pass row losses' tiles, 40 sampled configurations each
# (KL on GPU 0, smoothed cross-entropy on GPU 1), and the masked cumsum through the harness with
# the chained scan's new defaults. Sweeps are packed into one archive per GPU (the device tool
# returns a limited number of files).
set -u
export PYTHONPATH=src KERNELWRIGHT_PRESTART=2
sweep="python scripts/gpu_schedule_sweep.py --designs 1 --configs 40 --deadline 300"
harness="python scripts/gpu_optimize_suite.py --budget 1 --tune 0 --trials 2 --timeout 60"
scripts/per_gpu.sh \
  "timeout 320 $sweep --only 29_kl_div_distill --out /tmp/s0; tar czf \$OUT/sweep0.tgz --exclude=src -C /tmp s0; KERNELWRIGHT_HOME=/tmp/kw0 timeout 100 $harness --only 21_cumsum_masked_time --deadline 90 --out \$OUT/o0" \
  "timeout 320 $sweep --only 28_cross_entropy_smoothed --out /tmp/s1; tar czf \$OUT/sweep1.tgz --exclude=src -C /tmp s1"
