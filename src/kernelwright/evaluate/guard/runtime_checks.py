"""Checks on the judge's report about a candidate's process.

Two kinds of evidence, never mixed up:

    the judge's own    comparisons of every output (trials, variants, timed calls, the elements
                       sampled when a batch returned), the inputs after each call, the clock
    the process's      what the candidate's process says it saw of itself (operators, launches,
                       threads, patched functions, its CUDA-event times); it can be lied about,
                       so it only ever adds a reason to refuse
"""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from kernelwright.evaluate.guard.registry import GuardContext, register_check
from kernelwright.evaluate.oplog import VENDOR_OPS, compute_ops
from kernelwright.hardware.peaks import SOL_LIMIT  # past the speed of light by more: refused

# Python threads that libraries start on their own (none seen so far with Triton 3.6 / torch 2.11
# to 2.13); a name is listed here only after it was seen in an honest evaluation.
BENIGN_THREADS: frozenset[str] = frozenset()
# The judge's clock must see at least this fraction of the time the process's own events saw.
CLOCK_AGREEMENT = 0.8


@register_check(
    "plain-tensor-outputs",
    stage="runtime",
    catches="lazy outputs: tensor subclasses or views that compute (or change) on access",
    how="every output must be exactly a torch.Tensor (no subclass, nn.Parameter included), "
    "strided, not a lazy conjugate or negative view; the judge reads the output's memory itself",
)
def plain_tensor_outputs(ctx: GuardContext) -> list[str]:
    failure = ctx.report.get("failure") or {}
    if failure.get("status") == "rejected" and failure.get("stage") == "outputs":
        return [str(failure.get("message"))]
    return []


@register_check(
    "protocol",
    stage="runtime",
    catches="a process that answers the judge with something other than what it asked for "
    "(forged descriptors, malformed frames)",
    how="every frame and tensor descriptor is validated by the judge before it is used",
)
def protocol(ctx: GuardContext) -> list[str]:
    failure = ctx.report.get("failure") or {}
    return [str(failure.get("message"))] if failure.get("check") == "protocol" else []


@register_check(
    "unwritten-output",
    stage="runtime",
    catches="unwritten or stale outputs (returning `empty` memory) and partial work (some rows, "
    "one block)",
    how="the reference never runs in the candidate's process, so no stale answer is in its "
    "memory; its allocations during checked calls are filled with NaN; every element of every "
    "output is compared, over several trials and input shapes",
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
    how="the judge writes each call's inputs and compares them bit for bit after the call "
    "(when the reference itself mutates its inputs, the candidate's must match the reference's)",
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
    return _wrong_runs(ctx, "variant")


@register_check(
    "constraint-shape-range",
    stage="runtime",
    catches="breaking a required shape range (a kernel that works only at the task's own size)",
    how="with shape ranges (constraints), the candidate must be correct with the task's size "
    "constant set to each end of every range, as well as on the trials",
)
def shape_ranges(ctx: GuardContext) -> list[str]:
    return _wrong_runs(ctx, "shape-range")


def _wrong_runs(ctx: GuardContext, kind: str) -> list[str]:
    """The wrong checked runs of ``kind`` (their labels and messages), once the trials are
    right: a wrong trial is already an incorrect verdict."""
    if not ctx.trials_correct:
        return []
    return [
        f"{run.get('label')}: {run.get('message')}"
        for run in ctx.report.get("runs", [])
        if run.get("kind") == kind and not run.get("ok")
    ][:3]


@register_check(
    "timed-outputs",
    stage="runtime",
    catches="behaving honestly only when checked: caching answers (by pointer, version, sampled "
    "values), skipping work in timed calls, going wrong after many calls, or finishing work after "
    "the call returned (a thread, a side stream, another process, a finalizer)",
    how="every timed call runs on fresh inputs; the judge reads calls it picks at random after "
    "each batch, copies sampled elements the moment the batch returned, requires them to equal "
    "bit for bit the outputs it then compares in full with the reference",
)
def timed_outputs(ctx: GuardContext) -> list[str]:
    if not ctx.trials_correct:
        return []
    reasons = []
    for entry in (ctx.report.get("timing") or {}).get("checked", []):
        if not entry.get("ok"):
            reasons.append(f"{entry.get('label')}: wrong output ({entry.get('message')})")
        elif entry.get("late"):
            reasons.append(f"{entry.get('label')}: {entry['late']}")
    return reasons[:2]


@register_check(
    "custom-kernel",
    stage="runtime",
    catches="delegating the whole forward to the framework (no kernel of the candidate's own)",
    how="Triton launches (through a JIT function or a compiled kernel it returned, counted "
    "under the kernel's one name) and calls into load_inline/load extensions are counted by a "
    "monitor installed before the candidate is imported; at least one must happen per forward",
)
def custom_kernel(ctx: GuardContext) -> list[str]:
    if not ctx.trials_correct or "launches" not in ctx.observed:
        return []
    if int(ctx.observed.get("launches") or 0) == 0:
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
    skip = (ctx.report.get("ablation") or {}).get("skip") or {}
    compare = skip.get("compare") or {}
    if ctx.trials_correct and skip.get("outcome") == "returned" and compare.get("ok"):
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
    raised = (ctx.report.get("ablation") or {}).get("raise") or {}
    compare = raised.get("compare") or {}
    if ctx.trials_correct and raised.get("outcome") == "returned" and compare.get("ok"):
        return [
            "when its kernels fail the forward still returns the right answer: it falls back "
            "to the framework"
        ]
    return []


@register_check(
    "framework-delegation",
    stage="runtime",
    catches="doing the task's work in PyTorch while launching a token kernel (a copy, say), "
    "including the same math spelled with other operators (erf for gelu)",
    how="the candidate's ATen operators are counted and every framework result the size of an "
    "output is fingerprinted (except those computed from what its kernels wrote): refused when "
    "it runs every compute operator of the reference, when a framework result already equals "
    "the answer it returns, when PyTorch computes more elements than the whole reference does, "
    "or when tensors go to NumPy. Keeping a vendor GEMM/convolution and computing the rest in "
    "its own kernels is a hybrid: accepted, labelled, where the reference has one itself; a "
    "vendor product or convolution in a task whose reference has none is refused (the work "
    "spelled as a product)",
)
def framework_delegation(ctx: GuardContext) -> list[str]:
    if not ctx.trials_correct:
        return []
    reasons = []
    answered = ctx.observed.get("answer_from_framework") or []
    if answered:
        reasons.append(
            f"the returned output was already computed by the framework ({', '.join(answered)}); "
            "the candidate's kernels only moved it"
        )
    ref_ops = compute_ops(Counter(ctx.prepared.get("op_counts") or {}))
    cand = ctx.observed.get("op_counts")
    if ref_ops and cand is not None:
        cand_ops = compute_ops(Counter(cand))
        if all(cand_ops[op] >= n for op, n in ref_ops.items()):
            names = ", ".join(sorted(ref_ops))
            reasons.append(
                f"the candidate runs every compute operator of the reference in PyTorch ({names})"
            )
        vendor = sorted(op for op in cand_ops if op in VENDOR_OPS)
        if vendor and not any(op in VENDOR_OPS for op in ref_ops):
            reasons.append(
                f"the candidate hands work to the vendor library ({', '.join(vendor)}) where the "
                "reference has no matrix product or convolution: the framework does the task"
            )
    if int(ctx.observed.get("numpy_conversions") or 0):
        reasons.append("tensors were converted to NumPy arrays inside forward: the work must "
                       "run in the candidate's kernels")
    ref_work = int(ctx.prepared.get("framework_work") or 0)
    cand_work = int(ctx.observed.get("framework_work") or 0)
    if ref_work and cand_work > ref_work:
        reasons.append(
            f"PyTorch computed {cand_work} elements in the candidate's forward, more than the "
            f"whole reference's element-wise and reduction work ({ref_work}): the framework "
            "does the task"
        )
    return reasons


@register_check(
    "dispatch-escape",
    stage="runtime",
    catches="leaving the harness's dispatch mode (torch.utils._python_dispatch."
    "_disable_current_modes) so the framework work it does is not seen",
    how="the mode that observes each checked call must still be on the stack when forward "
    "returns, and the profiler, which records every ATen call, must not have seen compute "
    "operators the mode missed; the private dispatch-mode APIs are also refused in the source",
)
def dispatch_escape(ctx: GuardContext) -> list[str]:
    reasons = []
    if ctx.observed and ctx.observed.get("mode_intact") is False:
        reasons.append("the harness's dispatch mode was removed during forward")
    below = ctx.observed.get("below_mode") or []
    if below:
        reasons.append(f"PyTorch operators ran where the harness's dispatch mode did not see "
                       f"them ({', '.join(below[:5])}): from C++, another thread, or a mode "
                       "switched off")
    return reasons


@register_check(
    "harness-integrity",
    stage="runtime",
    catches="patching timers or the harness (time.perf_counter, torch.cuda.Event.elapsed_time, "
    "torch.cuda.synchronize, the runner's functions, the launch monitor)",
    how="the objects behind those names are recorded before the candidate is imported and "
    "compared at the end; the times that count come from the judge's clock in another process",
)
def harness_integrity(ctx: GuardContext) -> list[str]:
    changed = sorted(
        set(ctx.observations.get("identity_changed") or [])
        | set(ctx.observations.get("identity_after_import") or [])
    )
    return [f"replaced {', '.join(changed)}"] if changed else []


@register_check(
    "compiled-frames",
    stage="runtime",
    catches="PyTorch's compiler run in the candidate's process by a spelling the source check "
    "did not resolve (compiler-delegation)",
    how="the process reports TorchDynamo's count of compiled frames when the evaluation ends "
    "(the harness never imports TorchDynamo there); any is refused",
)
def compiled_frames(ctx: GuardContext) -> list[str]:
    frames = ctx.observations.get("compiled_frames") or 0
    return [f"TorchDynamo compiled {frames} frame(s) in its process"] if frames else []


@register_check(
    "background-threads",
    stage="runtime",
    catches="work on a background thread that outlives the call, outside the observed region",
    how="the Python threads and the operating-system threads (/proc/self/task, which also sees "
    "_thread and native threads) alive after the warm-up are compared with those alive at the "
    "end, and an audit hook records every thread started during the calls (a candidate that "
    "fails before the warm-up ends is judged by its failure)",
)
def background_threads(ctx: GuardContext) -> list[str]:
    py = [n for n in ctx.observations.get("new_threads") or [] if n not in BENIGN_THREADS]
    native = ctx.observations.get("new_os_threads") or []
    started = ctx.observations.get("thread_starts") or []
    reasons = []
    if py:
        reasons.append(f"left Python thread(s) running: {', '.join(py)}")
    if native:
        names = ctx.observations.get("new_os_thread_names") or []
        named = f" ({', '.join(names[:4])})" if names else ""
        reasons.append(
            f"started {len(native)} operating-system thread(s) after its warm-up{named}")
    if started:
        reasons.append(f"started {len(started)} thread(s) during its calls (joined or not)")
    return reasons


@register_check(
    "processes",
    stage="runtime",
    catches="work handed to another process: a helper forked while compiling and still running, "
    "or processes started during the calls",
    how="the candidate's processes are listed by the executor when the evaluation ends (only its "
    "own may remain); seccomp refuses new processes once it is sealed, and an audit hook records "
    "the attempts",
)
def processes(ctx: GuardContext) -> list[str]:
    reasons = []
    attempts = ctx.observations.get("process_attempts") or []
    if attempts:
        reasons.append(f"tried to start processes during its calls: {'; '.join(attempts[:2])}")
    extra = ctx.report.get("extra_processes") or []
    if extra:
        reasons.append(f"left {len(extra)} process(es) of its own running: {', '.join(extra[:3])}")
    return reasons


# A timed call must launch at least this share of a checked call's programs, kernel by kernel:
# grids that depend on the inputs' values (a compaction, a list of non-empty tiles) vary a little
# between calls, while a token launch or half the rows is far below it.
PROGRAMS_KEPT = 0.875


@register_check(
    "timed-kernels",
    stage="runtime",
    catches="timed calls that run fewer of the candidate's kernels than checked calls, or the "
    "same kernels over fewer programs (handing the timed work to the framework, a token launch "
    "in place of the real kernel, a smaller grid)",
    how="the launch monitor counts the candidate's launches per kernel name in each timed "
    "batch, and the programs of each Triton launch (its grid, normalised before it launches); "
    "per call they must be at least those of a checked call, kernel by kernel (programs: at "
    f"least {PROGRAMS_KEPT:.1%})",
)
def timed_kernels(ctx: GuardContext) -> list[str]:
    timing = ctx.report.get("timing") or {}
    checked = ctx.observed.get("launches")
    per_call = timing.get("launches_per_call") or []
    if not ctx.trials_correct or not isinstance(checked, int) or not checked or not per_call:
        return []
    fewest = min(per_call)
    if fewest < checked:
        return [f"a timed call launched {fewest:g} kernel(s) of its own, a checked call {checked}"]
    names = ctx.observed.get("launch_names") or {}
    for batch in timing.get("launch_names_per_call") or []:
        for name, n in sorted(names.items()):
            if isinstance(n, int) and batch.get(name, 0) < n:
                return [f"a timed call launched {name} {batch.get(name, 0):g} time(s), a "
                        f"checked call {n}"]
    programs = ctx.observed.get("launch_programs") or {}
    for batch in timing.get("launch_programs_per_call") or []:
        for name, n in sorted(programs.items()):
            if isinstance(n, int) and batch.get(name, 0) < PROGRAMS_KEPT * n:
                return [f"a timed call launched {name} over {batch.get(name, 0):g} program(s), "
                        f"a checked call over {n}"]
    return []


@register_check(
    "precision-policy",
    stage="runtime",
    catches="switching TF32 on (or other matmul precision flags) under the fp32 policy, and "
    "computing in half precision, bfloat16 or TF32 under it",
    how="the policy's flags are read back at the end; under fp32 each output's error against a "
    "float64 run of the reference may be at most 16x the fp32 reference's own (every trial, and "
    "every timed call read back: all timed batches on the CPU; on a GPU all of them where "
    "the judge's float64 runs are cheap, else one chosen at random)",
)
def precision_policy(ctx: GuardContext) -> list[str]:
    reasons = []
    before = ctx.observations.get("policy_before")
    after = ctx.observations.get("policy_after")
    if before and after and before != after:
        diff = ", ".join(
            f"{k}: {before.get(k)} -> {after.get(k)}"
            for k in after
            if before.get(k) != after.get(k)
        )
        reasons.append(f"changed the precision policy's flags ({diff})")
    entries = list(ctx.report.get("runs", [])) + list(
        (ctx.report.get("timing") or {}).get("checked", []))
    for entry in entries:
        if entry.get("precision"):
            reasons.append(f"{entry.get('label')}: {entry['precision']}")
            break
    return reasons


@register_check(
    "sandbox",
    stage="runtime",
    catches="reading the task file, cached results or the archive; reading other processes",
    how="Landlock confines the process's file system before it imports anything (read-only "
    "system and package folders, its own scratch folder); an audit hook records attempts on "
    "other processes' /proc entries",
)
def sandbox(ctx: GuardContext) -> list[str]:
    denied = ctx.observations.get("audit_denied") or []
    return [f"tried to access protected paths: {'; '.join(denied[:3])}"] if denied else []


@register_check(
    "speed-of-light",
    stage="runtime",
    catches="a time no correct kernel can reach: work skipped or done outside the timed calls",
    how=f"a median time below the roofline floor by more than {SOL_LIMIT - 1:.0%} is refused; "
    "the floor's bandwidth and matrix rate are the larger of the measured ceiling and the "
    "device's datasheet peak (the measured ceilings x1.5 on a device without one)",
)
def speed_of_light(ctx: GuardContext) -> list[str]:
    from kernelwright.evaluate.verdict import speed_of_light_of, stats_of
    from kernelwright.records import Precision

    timing = ctx.report.get("timing")
    if not timing or not ctx.trials_correct:
        return []
    stats = stats_of(timing)
    precision = Precision(ctx.prepared.get("precision", "fp32"))
    sol = speed_of_light_of(dict(ctx.prepared), precision, stats, physical=True)
    if sol is not None and sol.fraction is not None and sol.fraction > SOL_LIMIT:
        return [
            f"{stats.median_ms if stats else 0:.4f} ms is {sol.fraction:.2f}x the speed of light "
            f"({sol.floor_ms:.4f} ms, {sol.bound}-bound): impossible for a kernel that reads its "
            "inputs and writes its outputs"
        ]
    return []


@register_check(
    "clock-agreement",
    stage="runtime",
    catches="timed work the judge's clock did not see",
    how=f"the judge's time per call must be at least {CLOCK_AGREEMENT:.0%} of the time the "
    "process's own CUDA events measured inside the same batches, less the judge's own fixed "
    "cost per call (a gap smaller than what the judge subtracts is within its resolution)",
)
def clock_agreement(ctx: GuardContext) -> list[str]:
    timing: Any = ctx.report.get("timing")
    if ctx.device != "cuda" or not timing or not timing.get("events_ms"):
        return []
    judge = statistics.median(timing["samples_ms"])
    events = statistics.median(timing["events_ms"])
    # The calibrated fixed cost is subtracted from every batch; where the machine was busier
    # while it was calibrated than while a batch ran, a call under a few microseconds reads
    # as near zero. Work hidden from the judge must exceed that share to be told from it.
    fixed = statistics.median(timing["fixed_ms"]) if timing.get("fixed_ms") else 0.0
    if judge + fixed < CLOCK_AGREEMENT * events:
        return [
            f"the judge measured {judge:.4f} ms per call (its fixed cost {fixed:.4f} ms a call "
            f"subtracted) but the process's own events {events:.4f} ms: part of the timed "
            "work ran outside the judge's window"
        ]
    return []
