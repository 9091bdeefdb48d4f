#!/usr/bin/env bash
# One single-H200 call (sixth session): the GPU tests, then the harness on the tasks whose
# kernels this session changed (team defaults, the chained scan's warps, top-k over sorted
# lanes). PROBE=1 first runs the chained scan's probe (stages left out).
set -u
export PYTHONPATH=src KERNELWRIGHT_PRESTART=2
if [ "${PROBE:-0}" = 1 ]; then timeout 200 python scripts/gpu_probe_chained.py 2>&1 | tail -34; fi
timeout 300 python -m pytest -q tests/gpu 2>&1 | tail -4
# outside the memory-bound suite, but its group norm now takes the team's new defaults
timeout 90 python scripts/gpu_profile_design.py benchmarks/level2/07_conv2d_group_norm_silu.py 2>&1 | tail -2
tasks="${TASKS:-10_group_norm,11_instance_norm,21_cumsum_masked_time,04_moe_topk_gating}"
KERNELWRIGHT_HOME=/tmp/kw timeout 240 python scripts/gpu_optimize_suite.py --budget 1 --tune 0 \
  --trials 2 --timeout 60 --deadline 230 --only "$tasks" --out "$OUT/suite" 2>&1 | tail -12
python - "$OUT/suite/optimize_suite.jsonl" <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    print(r["task"], r.get("status"), "best", round(r.get("best_ms") or 0, 4), "eager",
          round(r.get("eager_ms") or 0, 4), "compile", r.get("compile_ms"),
          "sol", round(r.get("sol_fraction") or 0, 3), r.get("design"), r.get("params"))
PY
