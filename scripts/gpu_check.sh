#!/usr/bin/env bash
# The harness's checks on a CUDA machine, in one command, results written as they come:
#   0. the sm_90 compile checks of emitted kernels (tests marked sm90), in --out/sm90.log
#   1. the GPU tests (adversarial suite included), every outcome in --out/pytest.log
#   2. the harness's own cost: `kernelwright eval` of the softmax example twice (the second
#      finds the baselines cached), verdicts in --out/softmax-{1,2}.json
#   3. KernelBench's largest tasks with their own model as the solution, one verdict each in
#      --out/kernelbench/, until --deadline seconds have passed since the start
# Runs from source (PYTHONPATH=src) with the machine's own torch and Triton.
#
#   bash scripts/gpu_check.sh --out runs/gpu-check [--deadline 540] [--tests-limit 300]
#                             [--tasks kernelbench/largest30.txt]
set -uo pipefail
cd "$(dirname "$0")/.."
out="runs/gpu-check" deadline=540 tests_limit=300 tasks="kernelbench/largest30.txt"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --deadline) deadline="$2"; shift 2 ;;
    --tasks) tasks="$2"; shift 2 ;;
    --tests-limit) tests_limit="$2"; shift 2 ;;
    *) echo "error: unknown option $1 (use --out, --deadline, --tests-limit, --tasks)" >&2
       exit 2 ;;
  esac
done
export PYTHONPATH=src PYTHONUNBUFFERED=1
mkdir -p "$out/kernelbench"
start=$SECONDS
summary() {  # status, candidate ms and wall seconds of a verdict file
  python -c 'import json,sys; d=json.load(open(sys.argv[1])); c=(d.get("timing") or {}).get("candidate") or {}; print(d["status"], c.get("median_ms"), round(d.get("duration_s") or 0, 1), str(d["message"])[:160])' "$1" 2>&1 | tail -1
}

timeout -s INT 150 python -m pytest tests/integration -m sm90 -p no:cacheprovider -q \
  > "$out/sm90.log" 2>&1
echo "sm_90 compile checks: exit $? (log: $out/sm90.log)"; tail -1 "$out/sm90.log"

# SIGINT at the limit: pytest then still prints every failure collected so far
timeout -s INT "$tests_limit" python -m pytest tests/gpu -p no:cacheprovider -v --tb=short \
  --timeout 240 -rA > "$out/pytest.log" 2>&1
echo "tests/gpu: exit $? (log: $out/pytest.log)"; tail -1 "$out/pytest.log"

for i in 1 2; do
  python -m kernelwright eval examples/softmax/task.py examples/softmax/solution.py --no-compile \
    -q --json "$out/softmax-$i.json" > "$out/softmax-$i.log" 2>&1
  echo "softmax eval $i: $(summary "$out/softmax-$i.json")"
done

for task in $(grep -v '^#' "$tasks"); do
  if [ $(( SECONDS - start )) -gt "$deadline" ]; then
    echo "deadline reached: later tasks of $tasks not run"; break
  fi
  name=$(basename "$task" .py)
  python -m kernelwright eval "$task" --reference --no-baselines -q \
    --json "$out/kernelbench/$name.json" > "$out/kernelbench/$name.log" 2>&1
  echo "$name: $(summary "$out/kernelbench/$name.json")"
done
