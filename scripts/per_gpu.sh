#!/usr/bin/env bash
# Run one command per GPU at once: the i-th argument with CUDA_VISIBLE_DEVICES=i, its output in
# ${OUT:-.}/gpu<i>.log; waits for all and prints each log's last lines. For the multi-GPU device
# machines, where independent shards (tasks, spaces) need no communication between GPUs.
#
#   scripts/per_gpu.sh "python scripts/a.py --shard 1/2" "python scripts/a.py --shard 2/2"
set -u
logdir="${OUT:-.}"
mkdir -p "$logdir"
i=0
pids=()
for cmd in "$@"; do
  (export CUDA_VISIBLE_DEVICES=$i; bash -c "$cmd") >"$logdir/gpu$i.log" 2>&1 &
  pids+=($!)
  i=$((i + 1))
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
for ((j = 0; j < i; j++)); do
  echo "===== GPU $j"
  tail -n "${TAIL_LINES:-45}" "$logdir/gpu$j.log"
done
exit $status
