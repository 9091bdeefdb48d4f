#!/usr/bin/env bash
# One single-H200 call (sixth session): the chained scan's probe (stages left out, the
# speculative start against waiting for the ticket), its GPU tests (real waits, real reloads),
# then the harness on the three tasks this session changed (team defaults, speculative start).
set -u
export PYTHONPATH=src KERNELWRIGHT_PRESTART=2
timeout 200 python scripts/gpu_probe_chained.py 2>&1 | tail -34
timeout 150 python -m pytest -q tests/gpu/test_scan_chained_gpu.py 2>&1 | tail -4
KERNELWRIGHT_HOME=/tmp/kw timeout 220 python scripts/gpu_optimize_suite.py --budget 1 --tune 0 \
  --trials 2 --timeout 60 --deadline 210 --only "${TASKS:-10_group_norm,11_instance_norm,21_cumsum_masked_time}" \
  --out "$OUT/suite" 2>&1 | tail -12
