"""Checks on what the judge and the candidate's process observed while it ran."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from kernelwright.evaluate.guard.registry import GuardContext, register_check
from kernelwright.evaluate.oplog import compute_ops

# Python threads that libraries start on their own (none seen so far with Triton 3.6 / torch 2.11
# to 2.13); a name is listed here only after it was seen in an honest evaluation.
BENIGN_THREADS: frozenset[str] = frozenset()


@register_check(
    "plain-tensor-outputs",
    stage="runtime",
    catches="lazy outputs: tensor subclasses or views that compute (or change) on access",
    how="every output must be a plain, strided torch.Tensor that is not a lazy conjugate or "
    "negative view; outputs are copied by the harness after a device synchronisation",
)
def plain_tensor_outputs(ctx: GuardContext) -> list[str]:
    err = ctx.observations.get("output_type_error")
    return [str(err)] if err else []


@register_check(
    "unwritten-output",
    stage="runtime",
    catches="unwritten or stale outputs (returning `empty` memory) and partial work (some rows, "
    "one block)",
    how="the reference runs in another process first, so no stale result can be found in "
    "memory; every allocation the candidate makes during correctness runs is filled with NaN "
    "first; every element of every output is compared, over several trials and input shapes",
)
def unwritten_output(ctx: GuardContext) -> list[str]:
    reasons = []
    for run in ctx.report.get("runs", []):
        n = int(run.get("unwritten") or 0)
        if n:
            reasons.append(
                f"{run.get('label')}: {n} output element(s) still hold the harness's NaN poison, "
                "so the candidate never wrote them"
            )
    return reasons[:3]


@register_check(
    "input-mutation",
    stage="runtime",
    catches="modifying inputs, including writing the answer into an input",
    how="each run gets its own clones of the inputs, compared bit for bit with the originals "
    "after the call (when the reference itself mutates its inputs, the candidate's mutated "
    "inputs must match the reference's)",
)
def input_mutation(ctx: GuardContext) -> list[str]:
    return [
        f"{run.get('label')}: {run['mutation']}"
        for run in ctx.report.get("runs", [])
        if run.get("mutation")
    ][:3]


@register_check(
    "shape-variants",
    stage="runtime",
    catches="hard-coding the task's shapes",
    how="when a task defines get_input_variants(), the candidate must be correct on every "
    "variant as well as on the trials",
)
def shape_variants(ctx: GuardContext) -> list[str]:
    if not ctx.trials_correct:
        return []
    return [
        f"{run.get('label')}: {run.get('message')}"
        for run in ctx.report.get("runs", [])
        if run.get("kind") == "variant" and not run.get("ok")
    ][:3]


@register_check(
    "timed-outputs",
    stage="runtime",
    catches="caching results across calls (by shape, by pointer, by hash) so timed runs skip work",
    how="every trial draws fresh values into fresh tensors; timed runs rotate between input sets "
    "with different values, and the last output of each set is compared with the reference",
)
def timed_outputs(ctx: GuardContext) -> list[str]:
    if not ctx.trials_correct:
        return []
    return [
        f"{entry.get('label')}: the output of a timed run is wrong ({entry.get('message')})"
        for entry in ctx.report.get("timing_outputs", [])
        if not entry.get("ok")
    ][:2]


@register_check(
    "state-drift",
    stage="runtime",
    catches="kernels that are correct for the first calls and wrong (or skipped) later",
    how="after the timing loop the same model instance runs once more on fresh inputs and is "
    "compared with the reference",
)
def state_drift(ctx: GuardContext) -> list[str]:
    post = ctx.report.get("post_check")
    if not ctx.trials_correct or not post or post.get("ok"):
        return []
    return [f"wrong after the timing loop: {post.get('message')}"]


@register_check(
    "custom-kernel",
    stage="runtime",
    catches="delegating the whole forward to the framework (no kernel of the candidate's own)",
    how="Triton launches and calls into load_inline/load extensions are counted by a monitor "
    "installed before the candidate is imported; at least one must happen per forward",
)
def custom_kernel(ctx: GuardContext) -> list[str]:
    if not ctx.trials_correct or "launches_first_run" not in ctx.observations:
        return []
    if int(ctx.observations.get("launches_first_run") or 0) == 0:
        return [
            "no Triton kernel or compiled extension ran during the forward; the work was left "
            "to PyTorch"
        ]
    return []


@register_check(
    "kernel-result-used",
    stage="runtime",
    catches="a kernel that launches but whose result is not used",
    how="ablation: run 1 is repeated with the candidate's launches dropped (extension results "
    "replaced by NaN) and poisoned allocations; if the output is still right, the kernels did "
    "not produce it",
)
def kernel_result_used(ctx: GuardContext) -> list[str]:
    skip = (ctx.report.get("ablation") or {}).get("skip")
    if ctx.trials_correct and skip and skip.get("ok"):
        return [
            "with the candidate's kernels disabled the output is still correct, so the kernels' "
            "results are not what the forward returns"
        ]
    return []


@register_check(
    "exception-fallback-runtime",
    stage="runtime",
    catches="falling back to the framework when a kernel fails",
    how="ablation: run 1 is repeated with every launch raising; a forward that still returns "
    "the right answer has swallowed the failure",
)
def exception_fallback_runtime(ctx: GuardContext) -> list[str]:
    raised = (ctx.report.get("ablation") or {}).get("raise")
    if ctx.trials_correct and raised and raised.get("ok"):
        return [
            "when its kernels fail the forward still returns the right answer: it falls back "
            "to the framework"
        ]
    return []


@register_check(
    "framework-delegation",
    stage="runtime",
    catches="doing the task's work in PyTorch while launching a token kernel (a copy, say)",
    how="the ATen operators the reference dispatches are compared with the candidate's: a "
    "candidate that dispatches every compute operator of the reference itself delegates the "
    "work. Keeping a vendor GEMM/convolution and fusing the rest is a hybrid: accepted, labelled",
)
def framework_delegation(ctx: GuardContext) -> list[str]:
    ref_ops = compute_ops(Counter(ctx.prepared.get("op_counts") or {}))
    cand = ctx.observations.get("op_counts")
    if not ctx.trials_correct or not ref_ops or cand is None:
        return []
    cand_ops = compute_ops(Counter(cand))
    if all(cand_ops[op] >= n for op, n in ref_ops.items()):
        names = ", ".join(sorted(ref_ops))
        return [f"the candidate runs every compute operator of the reference in PyTorch ({names})"]
    return []


@register_check(
    "harness-integrity",
    stage="runtime",
    catches="patching timers or the harness (time.perf_counter, torch.cuda.Event.elapsed_time, "
    "torch.cuda.synchronize, triton.testing.do_bench, comparison and launch-monitor functions)",
    how="the objects behind those names are recorded before the candidate is imported and "
    "compared after import and after every stage; timing statistics are computed in the parent "
    "from raw samples",
)
def harness_integrity(ctx: GuardContext) -> list[str]:
    changed = sorted(
        set(ctx.observations.get("identity_changed") or [])
        | set(ctx.observations.get("identity_after_import") or [])
    )
    return [f"replaced {', '.join(changed)}"] if changed else []


@register_check(
    "background-threads",
    stage="runtime",
    catches="work on a background thread that outlives the call, unseen by the timer",
    how="the Python threads alive before the candidate is imported are compared with those "
    "alive after timing",
)
def background_threads(ctx: GuardContext) -> list[str]:
    new = [n for n in ctx.observations.get("new_threads") or [] if n not in BENIGN_THREADS]
    return [f"left thread(s) running: {', '.join(new)}"] if new else []


@register_check(
    "unsynchronised-work",
    stage="runtime",
    catches="work on a side stream (or thread) that CUDA events on the timed stream miss",
    how="a few runs are also timed with a device-wide synchronisation before and after; the "
    "synchronised wall time must not exceed event time plus host launch time by more than "
    "0.1 ms and 50%",
)
def unsynchronised_work(ctx: GuardContext) -> list[str]:
    timing: Any = ctx.result.get("timing")
    if ctx.device != "cuda" or not timing or not timing.get("wall_ms"):
        return []
    events = statistics.median(timing["samples_ms"])
    wall = statistics.median(timing["wall_ms"])
    launch = statistics.median(timing["launch_ms"])
    expected = events + launch
    if wall - expected > max(0.1, 0.5 * expected):
        return [
            f"synchronised wall time {wall:.3f} ms far exceeds event time {events:.3f} ms plus "
            f"launch time {launch:.3f} ms: work runs outside the timed stream"
        ]
    return []


@register_check(
    "precision-policy",
    stage="runtime",
    catches="switching TF32 on (or other matmul precision flags) under the fp32 policy",
    how="the policy's flags are read back after the candidate ran; silent bf16/fp16 arithmetic "
    "is caught by the fp32 tolerance (1e-4) instead",
)
def precision_policy(ctx: GuardContext) -> list[str]:
    before = ctx.observations.get("policy_before")
    after = ctx.observations.get("policy_after")
    if before and after and before != after:
        diff = ", ".join(
            f"{k}: {before.get(k)} -> {after.get(k)}"
            for k in after
            if before.get(k) != after.get(k)
        )
        return [f"changed the precision policy's flags ({diff})"]
    return []


@register_check(
    "sandbox",
    stage="runtime",
    catches="reading the task file, cached results, the archive or the parent's command line",
    how="an audit hook installed before the import refuses opening protected paths and other "
    "processes' /proc entries, and records each attempt",
)
def sandbox(ctx: GuardContext) -> list[str]:
    denied = ctx.observations.get("audit_denied") or []
    return [f"tried to access protected paths: {'; '.join(denied[:3])}"] if denied else []
