"""Comparing a candidate's outputs with the reference's, element by element. Runs in the judge.

For each output, in order:

    count, shape, dtype      must match exactly (a float16 output under the fp32 policy is wrong)
    integers and booleans    must be equal (class indices, masks: no tolerance)
    floating                 |out - ref| <= atol + rtol * |ref| for every element; NaN only where
                             the reference has NaN; infinities equal; and the normalised error
                             ||out - ref||_2 / ||ref||_2 within ``norm_tolerance``, which catches
                             outputs so small that ``atol`` alone would accept anything (zeros)

Every element is compared: a kernel that wrote only some rows fails however few it missed.
NaNs where the reference is finite are counted as ``unwritten``: candidate memory is poisoned
with NaN before each correctness run, so these are elements the candidate never wrote.
"""

from __future__ import annotations

from typing import Any

from kernelwright.records import Tolerance


def norm_tolerance(tol: Tolerance) -> float:
    """Bound on the normalised L2 error: loose enough for honest reordering of sums, tight
    enough that an all-zeros output (normalised error 1.0) never passes."""
    return max(0.01, 5.0 * tol.rtol)


def compare_outputs(expected: list[Any], actual: Any, tol: Tolerance) -> dict[str, Any]:
    """Compare lists of tensors; returns ``ok``, a ``message`` and error statistics."""
    import torch

    result: dict[str, Any] = {
        "ok": False,
        "message": "",
        "max_abs_err": None,
        "max_rel_err": None,
        "norm_err": None,
        "unwritten": 0,
    }
    if not isinstance(actual, list) or not all(isinstance(a, torch.Tensor) for a in actual):
        result["message"] = "no tensor outputs were published"
        return result
    if len(actual) != len(expected):
        result["message"] = f"returned {len(actual)} output(s), expected {len(expected)}"
        return result
    max_abs = max_rel = norm = 0.0
    for i, (exp, out) in enumerate(zip(expected, actual, strict=True)):
        if tuple(out.shape) != tuple(exp.shape):
            result["message"] = (
                f"output {i} has shape {tuple(out.shape)}, expected {tuple(exp.shape)}"
            )
            return result
        if out.dtype != exp.dtype:
            result["message"] = (
                f"output {i} has dtype {str(out.dtype).removeprefix('torch.')}, expected "
                f"{str(exp.dtype).removeprefix('torch.')}"
            )
            return result
        out = out.to(exp.device)
        stats = (
            _compare_floating(exp, out, tol)
            if exp.is_floating_point()
            else _compare_exact(exp, out)
        )
        max_abs = max(max_abs, stats["max_abs_err"])
        max_rel = max(max_rel, stats["max_rel_err"])
        norm = max(norm, stats["norm_err"])
        result["unwritten"] += stats["unwritten"]
        if stats["message"]:
            result.update(max_abs_err=max_abs, max_rel_err=max_rel, norm_err=norm)
            result["message"] = f"output {i}: {stats['message']}"
            return result
    result.update(ok=True, max_abs_err=max_abs, max_rel_err=max_rel, norm_err=norm)
    return result


def _compare_floating(exp: Any, out: Any, tol: Tolerance) -> dict[str, Any]:
    import torch

    work_dtype = (
        torch.float64 if exp.dtype == torch.float64 or exp.device.type == "cpu" else (torch.float32)
    )
    r = exp.to(work_dtype)
    a = out.to(work_dtype)
    r_nan, a_nan = torch.isnan(r), torch.isnan(a)
    finite = torch.isfinite(r) & torch.isfinite(a)
    unwritten = int((a_nan & ~r_nan).sum())
    diff = torch.where(finite, (a - r).abs(), torch.zeros((), dtype=work_dtype, device=r.device))
    # Non-finite positions match only when both are NaN or both are the same infinity.
    same_special = (r_nan & a_nan) | (torch.isinf(r) & (a == r))
    bad_special = ~finite & ~same_special
    bound = tol.atol + tol.rtol * r.abs()
    bad = bad_special | (finite & (diff > bound))
    n_bad = int(bad.sum())
    max_abs = float(diff.max()) if diff.numel() else 0.0
    denom = torch.clamp(r.abs(), min=max(tol.atol, 1e-30))
    max_rel = float((diff / denom).max()) if diff.numel() else 0.0
    r_norm = float(torch.linalg.vector_norm(torch.where(finite, r, 0.0)))
    d_norm = float(torch.linalg.vector_norm(diff))
    norm_err = d_norm / r_norm if r_norm > 0 else (0.0 if d_norm == 0 else float("inf"))
    stats: dict[str, Any] = {
        "max_abs_err": max_abs,
        "max_rel_err": max_rel,
        "norm_err": norm_err,
        "unwritten": unwritten,
        "message": "",
    }
    if n_bad:
        idx = _first_index(bad)
        got, want = float(a[idx]), float(r[idx])
        what = f"{n_bad} of {bad.numel()} elements differ"
        if unwritten:
            what += f" ({unwritten} NaN where the reference is finite: never written?)"
        stats["message"] = (
            f"{what}; max abs error {max_abs:.3g}; first at index {tuple(idx)}: got {got:.6g}, "
            f"expected {want:.6g} (atol={tol.atol:g}, rtol={tol.rtol:g})"
        )
    elif r_norm > 0 and norm_err > norm_tolerance(tol):
        stats["message"] = (
            f"normalised error {norm_err:.3g} exceeds {norm_tolerance(tol):g} although every "
            "element is within atol: the output is far too small to be the answer"
        )
    return stats


def _compare_exact(exp: Any, out: Any) -> dict[str, Any]:
    bad = out != exp
    n_bad = int(bad.sum())
    stats: dict[str, Any] = {
        "max_abs_err": 0.0 if not n_bad else float((out.double() - exp.double()).abs().max()),
        "max_rel_err": 0.0,
        "norm_err": 0.0 if not n_bad else float(n_bad) / max(1, exp.numel()),
        "unwritten": 0,
        "message": "",
    }
    if n_bad:
        idx = _first_index(bad)
        stats["message"] = (
            f"{n_bad} of {bad.numel()} values differ (exact match required for "
            f"{str(exp.dtype).removeprefix('torch.')}); first at index {tuple(idx)}: got "
            f"{out[idx].item()}, expected {exp[idx].item()}"
        )
    return stats


def _first_index(mask: Any) -> tuple[int, ...]:
    import torch

    flat = int(torch.nonzero(mask.reshape(-1), as_tuple=False)[0, 0])
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), mask.shape))


def inputs_unchanged(pristine: list[Any], after: Any) -> str:
    """Empty when ``after`` equals ``pristine`` bit for bit; else which input changed."""
    import torch

    if not isinstance(after, list) or len(after) != len(pristine):
        return "the inputs after the call were not published"
    for i, (p, a) in enumerate(zip(pristine, after, strict=True)):
        if not isinstance(p, torch.Tensor):
            continue
        if not isinstance(a, torch.Tensor) or a.shape != p.shape or a.dtype != p.dtype:
            return f"input {i} was replaced or reshaped by the call"
        if not _bitwise_equal(p, a.to(p.device)):
            return f"input {i} was modified by the call"
    return ""


def _bitwise_equal(p: Any, a: Any) -> bool:
    import torch

    if torch.equal(p, a):
        return True
    if p.is_floating_point():  # NaN != NaN: equal where both are NaN
        return bool(((p == a) | (torch.isnan(p) & torch.isnan(a))).all())
    return False


def judge_outputs(reference: Any, published: Any, request: Any) -> dict[str, Any]:
    """Compare everything a candidate's process published with the reference.

    ``published`` has ``runs`` (outputs and inputs after the call, per run), ``timing_outputs``
    (the last timed output per input set), ``post_check`` (the timed instance on timing set 1
    again) and ``ablation`` (outputs with the candidate's kernels disabled). See
    ``candidate_worker``.
    """
    tol: Tolerance = request.tolerance
    report: dict[str, Any] = {"runs": [], "timing_outputs": [], "post_check": None, "ablation": {}}
    for i, run in enumerate(published.get("runs", [])):
        if i >= len(reference.expected) or run is None:
            break
        exp = reference.expected[i]
        entry = compare_outputs(exp["outputs"], run.get("outputs"), tol)
        entry["label"] = reference.runs[i]["label"]
        entry["kind"] = reference.runs[i]["kind"]
        if exp["inputs_after"] is None:
            entry["mutation"] = inputs_unchanged(
                reference.runs[i]["inputs"], run.get("inputs_after")
            )
        else:
            after = compare_outputs(exp["inputs_after"], run.get("inputs_after"), tol)
            entry["mutation"] = (
                ""
                if after["ok"]
                else (
                    "the reference mutates its inputs and the candidate's mutated inputs differ: "
                    + after["message"]
                )
            )
        report["runs"].append(entry)
    for j, outs in enumerate(published.get("timing_outputs") or []):
        if j < len(reference.timing_outputs):
            entry = compare_outputs(reference.timing_outputs[j], outs, tol)
            entry["label"] = f"timing set {j + 1}"
            report["timing_outputs"].append(entry)
    if published.get("post_check") is not None:
        report["post_check"] = compare_outputs(
            reference.timing_outputs[0], published["post_check"], tol
        )
    for mode, outs in (published.get("ablation") or {}).items():
        report["ablation"][mode] = (
            None if outs is None else compare_outputs(reference.expected[0]["outputs"], outs, tol)
        )
    return report
