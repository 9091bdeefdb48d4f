#!/usr/bin/env bash
# One x2 call: each GPU checks the team kernels of one norm (tests/gpu/test_team_gpu.py, split
# by task) and sweeps that norm's first two designs (the team, the looped kernel).
set -u
export PYTHONPATH=src KERNELWRIGHT_PRESTART=2
sweep="python scripts/gpu_schedule_sweep.py --designs 2 --configs 20 --deadline ${SWEEP_S:-330}"
scripts/per_gpu.sh \
  "timeout 150 python -m pytest -q tests/gpu/test_team_gpu.py -k 'group or softmax' 2>&1 | tail -8; timeout 360 $sweep --only 10_group_norm --out \$OUT/sweep0" \
  "timeout 150 python -m pytest -q tests/gpu/test_team_gpu.py -k instance 2>&1 | tail -8; timeout 360 $sweep --only 11_instance_norm --out \$OUT/sweep1"
