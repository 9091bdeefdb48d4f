#!/usr/bin/env bash
# One single-H200 call (sixth session): Nsight Compute on the masked cumsum's chained scan and
# the MoE top-k kernel (is either bound by memory, latency or issue?), then the team's whole
# space on six norm shapes (the suite's two norms, scripts/make_norm_sweep_tasks.py's four).
set -u
export PYTHONPATH=src KERNELWRIGHT_PRESTART=2
sweep="python scripts/gpu_schedule_sweep.py --designs 1 --full-space --min-task-s 10"
ncu_sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats"
prof() {  # task, label
  timeout 120 ncu --clock-control none $ncu_sections -k 'regex:_[0-9]+_kernel' -s 1 -c 1 \
    python scripts/gpu_profile_design.py "$1" > "$OUT/ncu_$2.txt" 2>&1
  echo "ncu $2 rc=$?"; grep -E "DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|Executed Ipc A" "$OUT/ncu_$2.txt" | head -12
}
prof benchmarks/level1/21_cumsum_masked_time.py cumsum
prof benchmarks/serving/04_moe_topk_gating.py moe
python scripts/make_norm_sweep_tasks.py /tmp/sweep_tasks > /dev/null
timeout 200 $sweep --root /tmp/sweep_tasks --deadline 190 --out /tmp/s0 > "$OUT/sweep0.txt" 2>&1
timeout 170 $sweep --only 10_group_norm,11_instance_norm --deadline 160 --out /tmp/s1 > "$OUT/sweep1.txt" 2>&1
tar czf "$OUT/sweeps.tgz" --exclude=src -C /tmp s0 s1
tail -25 "$OUT/sweep0.txt"; tail -15 "$OUT/sweep1.txt"
