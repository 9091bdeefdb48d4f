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

Under the fp32 policy the judge also knows each output's ``ref_error``, the fp32 reference's own
error against a float64 run (see :mod:`~kernelwright.evaluate.reference_error`); an output's
``atol`` is then ``max(atol, REF_ERROR_FACTOR * ref_error)``, so a long fp32 sum computed in
another order passes without the task declaring a looser ``atol``. ``rtol`` and the normalised
error bound never change.

The reference is itself an approximation, and where it is ill-conditioned two honest orders of
the same arithmetic disagree by more than any tolerance: attention on inputs scaled by 64 under
bf16, whose softmax is nearly one-hot, takes another key where two scores tie to rounding
(about 2 in 10^5 outputs, up to 1.0 off, between two fp32-accumulated orders). Given the exact
answer (the model run in float64 on the same inputs and weights: ``exact``), an element outside
the reference's tolerance passes when it is no farther from the exact answer than the
reference, within the same tolerance: ``|out - x| <= |ref - x| + atol + rtol * |x|``. The
elements still outside pass together when they are what an honest reordering looks like: all
finite, at most ``REF_ERROR_FACTOR`` times as many as the reference's own misses of the exact
answer (beyond the tolerance about it) plus ``STRAY_FRACTION`` of the output, and none farther
from it than the reference's farthest miss (near-ties go either way, so two honest orders each
miss the exact answer at a few elements, not the same ones: 109 and 141 of 3.1 M outputs, both
by at most 0.80, for the attention above). Where the reference is exact its farthest miss is a
rounding and nothing farther passes; a candidate is never less accurate than the reference by
more than the reference's own worst miss, and at few places. The elements so judged are
counted (``arbitrated``). The normalised error is arbitrated the same way: against the exact
answer, it may be ``REF_ERROR_FACTOR`` times the reference's own, and it says nothing where the
reference's own error is as large as the answer (an answer zero but for rounding). None of this
applies under a user's ``--atol``, which the judge applies exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernelwright.records import Tolerance

# A candidate's error against the fp32 reference is at most its own error against the exact
# answer plus the reference's, and an honest reordering of the same fp32 sums errs by about as
# much as the reference does: ~2x at most (on an H200, 8192-step scans against torch.cumsum:
# blocked 1.0-1.05x, a naive sequential one 2.2x). 4x leaves a margin for a candidate somewhat
# less accurate than the reference, while a wrong element (a dropped term, a shifted index)
# misses by a whole term: ~1, not ~1e-3.
REF_ERROR_FACTOR = 4.0

# Elements of an output that may miss the exact answer beyond the tolerance where the reference
# misses it less often, each by no more than the reference's own worst miss: a near-tie taken the
# other way moves a whole row of an attention's output (2 in 10^5 outputs between two honest
# orders at KernelBench's scale), and one element in 10^4 carries no saving of work.
STRAY_FRACTION = 1e-4

RefErrors = Sequence[float | None] | None


def norm_tolerance(tol: Tolerance) -> float:
    """Bound on the normalised L2 error: loose enough for honest reordering of sums, tight
    enough that an all-zeros output (normalised error 1.0) never passes."""
    return max(0.01, 5.0 * tol.rtol)


def effective_atol(tol: Tolerance, ref_error: float | None) -> float:
    """``atol`` for one output: the tolerance's, or ``REF_ERROR_FACTOR`` times the reference's
    own error when that is larger (None: not measured, the tolerance's)."""
    if ref_error is None:
        return tol.atol
    return max(tol.atol, REF_ERROR_FACTOR * ref_error)


def widening_note(tol: Tolerance, ref_error: float | None) -> str:
    """Why an output's atol is wider than the tolerance's; empty when it is not."""
    atol = effective_atol(tol, ref_error)
    if atol <= tol.atol:
        return ""
    return (
        f"atol={atol:.3g}, widened from {tol.atol:g}: {REF_ERROR_FACTOR:g} x the fp32 "
        f"reference's own error {ref_error:.3g} against float64"
    )


def compare_outputs(
    expected: list[Any], actual: Any, tol: Tolerance, ref_errors: RefErrors = None,
    exact: list[Any] | None = None,
) -> dict[str, Any]:
    """Compare lists of tensors; returns ``ok``, a ``message`` and error statistics.

    ``ref_errors`` (one per expected output, None where unmeasured) widen each output's atol as
    the module docstring says. The result's ``atol`` lists the atol applied per output (None for
    integer and boolean outputs) and ``widened`` says which outputs were widened and why.
    ``exact`` (the float64 run's outputs, one per expected output) arbitrates the elements
    outside the tolerance and a normalised error past its bound (module docstring); ``differ`` is
    True when the comparison failed on elements or on the normalised error of a floating output
    (so that arbitration could change the result). ``arbitrated`` counts the elements, and
    ``norm_arbitrated`` the outputs whose normalised error, the float64 answer passed.
    """
    import torch

    errors = _ref_error_per_output(ref_errors, len(expected))
    exacts = _exact_per_output(exact, expected)
    result: dict[str, Any] = {
        "ok": False,
        "message": "",
        "max_abs_err": None,
        "max_rel_err": None,
        "norm_err": None,
        "unwritten": 0,
        "arbitrated": 0,
        "norm_arbitrated": 0,
        "differ": False,
        "atol": [
            effective_atol(tol, e) if exp.is_floating_point() else None
            for exp, e in zip(expected, errors, strict=True)
        ],
        "widened": [
            f"output {i}: {note}"
            for i, (exp, e) in enumerate(zip(expected, errors, strict=True))
            if exp.is_floating_point() and (note := widening_note(tol, e))
        ],
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
            _compare_floating(exp, out, tol, errors[i], exacts[i])
            if exp.is_floating_point()
            else _compare_exact(exp, out)
        )
        max_abs = max(max_abs, stats["max_abs_err"])
        max_rel = max(max_rel, stats["max_rel_err"])
        norm = max(norm, stats["norm_err"])
        result["unwritten"] += stats["unwritten"]
        result["arbitrated"] += stats.get("arbitrated", 0)
        result["norm_arbitrated"] += stats.get("norm_arbitrated", 0)
        if stats["message"]:
            result["differ"] = bool(stats.get("differ"))
            result.update(max_abs_err=max_abs, max_rel_err=max_rel, norm_err=norm)
            result["message"] = f"output {i}: {stats['message']}"
            return result
    result.update(ok=True, max_abs_err=max_abs, max_rel_err=max_rel, norm_err=norm)
    return result


def _exact_per_output(exact: list[Any] | None, expected: list[Any]) -> list[Any]:
    """One exact output per expected one, None where there is none: a list of another length,
    or an entry that is not a floating tensor of the expected output's shape, arbitrates
    nothing."""
    import torch

    if exact is None or len(exact) != len(expected):
        return [None] * len(expected)
    return [x if isinstance(x, torch.Tensor) and x.is_floating_point()
            and tuple(x.shape) == tuple(e.shape) else None
            for x, e in zip(exact, expected, strict=True)]


def _ref_error_per_output(ref_errors: RefErrors, n: int) -> list[float | None]:
    """One entry per output; a list of the wrong length (another output count) measures none."""
    if ref_errors is None or len(ref_errors) != n:
        return [None] * n
    return list(ref_errors)


# Elements per step: full-size outputs hold 10^9 elements, and each comparison temporary of that
# size would be gigabytes on a device already holding the task twice.
CHUNK = 1 << 24


def _flat(t: Any) -> Any:
    return t.reshape(-1) if t.is_contiguous() else t.contiguous().reshape(-1)


def _identical(rf: Any, af: Any) -> bool:
    """Every element of ``af`` equal to ``rf``'s (NaN equal to nothing, -0.0 to 0.0), compared a
    chunk at a time and read back once."""
    import torch

    n = rf.numel()
    if n == 0 or af.numel() != n:
        return False
    differs = [torch.ne(rf[start:start + CHUNK], af[start:start + CHUNK]).any()
               for start in range(0, n, CHUNK)]
    return not bool(torch.stack(differs).any())


def _finite_and_within(rf: Any, af: Any, atol: float, rtol: float, work_dtype: Any,
                       denom_floor: float) -> tuple[float, float, float, float] | None:
    """Where every element is finite in both and ``|a - r| <= atol + rtol * |r|``: the largest
    absolute and relative errors and the norms of ``a - r`` and of ``r``, each computed as the
    whole comparison computes it (the same operations on the same chunks, so the same values);
    else None. One read-back for the whole output."""
    import torch

    rows = []
    for start in range(0, rf.numel(), CHUNK):
        r = rf[start:start + CHUNK].to(work_dtype)
        a = af[start:start + CHUNK].to(work_dtype)
        diff = (a - r).abs()  # NaN where either is NaN or both the same infinity, inf where one is
        r_abs = r.abs()
        bound = atol + rtol * r_abs  # infinite (or NaN) where r is
        # within, and r finite: then a is finite too
        ok = (diff <= bound) & (bound < float("inf"))
        rows.append(torch.stack([
            (ok.numel() - ok.sum()).double(),
            diff.max().double(),
            (diff / torch.clamp(r_abs, min=denom_floor)).max().double(),
            torch.linalg.vector_norm(diff, dtype=torch.float64),
            torch.linalg.vector_norm(r, dtype=torch.float64),
        ]))
    per_chunk = torch.stack(rows).tolist() if rows else []
    if any(row[0] for row in per_chunk):
        return None
    return (max([0.0, *(row[1] for row in per_chunk)]),
            max([0.0, *(row[2] for row in per_chunk)]),
            sum(row[3] ** 2 for row in per_chunk) ** 0.5,
            sum(row[4] ** 2 for row in per_chunk) ** 0.5)


def _compare_floating(
    exp: Any, out: Any, tol: Tolerance, ref_error: float | None = None, exact: Any = None
) -> dict[str, Any]:
    import torch

    atol = effective_atol(tol, ref_error)
    widened = widening_note(tol, ref_error)
    work_dtype = torch.float64 if exp.dtype == torch.float64 or exp.device.type == "cpu" else (
        torch.float32
    )
    rf, af = _flat(exp), _flat(out)
    denom_floor = max(tol.atol, 1e-30)
    if _identical(rf, af):
        # Every element is the reference's own value: every statistic below is zero and nothing
        # is left to arbitrate. One pass over the output instead of the comparison's thirty-odd
        # (the checks of a timed batch of one 6.4 GB output took 0.2 s on an H100).
        return {"max_abs_err": 0.0, "max_rel_err": 0.0, "norm_err": 0.0, "unwritten": 0,
                "arbitrated": 0, "differ": False, "message": ""}
    screened = _finite_and_within(rf, af, atol, tol.rtol, work_dtype, denom_floor)
    if screened is not None:
        # Every element finite in both and within the tolerance: nothing is unwritten, nothing
        # to arbitrate, and the statistics are those the whole comparison computes, in half its
        # passes. A normalised error past its bound still takes the whole comparison (the
        # float64 answer may arbitrate it).
        max_abs, max_rel, d_norm, r_norm = screened
        norm_err = d_norm / r_norm if r_norm > 0 else (0.0 if d_norm == 0 else float("inf"))
        if not (r_norm > 0 and norm_err > norm_tolerance(tol)):
            return {"max_abs_err": max_abs, "max_rel_err": max_rel, "norm_err": norm_err,
                    "unwritten": 0, "arbitrated": 0, "differ": False, "message": ""}
    xf = _flat(exact.to(exp.device)) if exact is not None else None

    def chunk_of(start: int) -> tuple[Any, Any, Any]:
        """The reference's, the candidate's and the exact answer's chunk from ``start``."""
        x = xf[start : start + CHUNK].to(work_dtype) if xf is not None else None
        return (rf[start : start + CHUNK].to(work_dtype), af[start : start + CHUNK].to(work_dtype),
                x)

    def bad_of(r: Any, a: Any, x: Any) -> tuple[Any, Any, Any, Any, Any, Any]:
        """A chunk's failing elements, its elements finite in both, |a - r| (0 where not
        finite), |r|, the elements NaN in ``a`` only (never written?) and the elements outside
        the tolerance that the exact answer ``x`` (None: none) accepts."""
        r_nan, a_nan = torch.isnan(r), torch.isnan(a)
        finite = torch.isfinite(r) & torch.isfinite(a)
        diff = torch.where(finite, (a - r).abs(), torch.zeros((), dtype=work_dtype,
                                                                device=r.device))
        r_abs = r.abs()
        # Non-finite positions match only when both are NaN or both are the same infinity.
        same_special = (r_nan & a_nan) | (torch.isinf(r) & (a == r))
        bad = torch.where(finite, diff > atol + tol.rtol * r_abs, ~same_special)
        if x is None:
            return bad, finite, diff, r_abs, a_nan & ~r_nan, torch.zeros_like(bad)
        # no farther from the exact answer than the reference is, within the tolerance
        closer = bad & finite & torch.isfinite(x) & (
            (a - x).abs() <= (r - x).abs() + atol + tol.rtol * x.abs())
        return bad & ~closer, finite, diff, r_abs, a_nan & ~r_nan, closer

    # Each chunk's statistics stay on the device, read back once for the whole output: a
    # read-back per statistic and chunk would leave the device idle while the host waits, then
    # launches the next few kernels (most of a large output's comparison time).
    rows = []
    for start in range(0, rf.numel(), CHUNK):
        r, a, x = chunk_of(start)
        bad, finite, diff, r_abs, unwritten_here, closer = bad_of(r, a, x)
        rows.append(torch.stack([
            bad.sum().double(),
            unwritten_here.sum().double(),
            diff.max().double(),
            (diff / torch.clamp(r_abs, min=denom_floor)).max().double(),
            torch.linalg.vector_norm(diff, dtype=torch.float64),
            torch.linalg.vector_norm(torch.where(finite, r, 0.0), dtype=torch.float64),
            closer.sum().double(),
            *(_against_exact(r, a, x, finite, bad, atol, tol.rtol) if x is not None else ()),
        ]))
    per_chunk = torch.stack(rows).tolist() if rows else []
    n_bad = int(sum(row[0] for row in per_chunk))
    unwritten = int(sum(row[1] for row in per_chunk))
    arbitrated = int(sum(row[6] for row in per_chunk))
    if n_bad and _misses_like_the_reference(per_chunk, n_bad, rf.numel(), atol, tol.rtol):
        arbitrated, n_bad = arbitrated + n_bad, 0
    # max(so far, chunk) from 0, chunk by chunk: a chunk whose maximum is NaN (a NaN in the
    # reference) is passed over, as before the statistics stayed on the device
    max_abs = max([0.0, *(row[2] for row in per_chunk)])
    max_rel = max([0.0, *(row[3] for row in per_chunk)])
    d_sq = sum(row[4] ** 2 for row in per_chunk)
    r_sq = sum(row[5] ** 2 for row in per_chunk)
    first: int | None = None
    if n_bad:
        chunk = next(i for i, row in enumerate(per_chunk) if row[0])
        at = chunk * CHUNK
        bad, *_ = bad_of(*chunk_of(at))
        first = at + int(torch.nonzero(bad, as_tuple=False)[0, 0])
    r_norm, d_norm = r_sq**0.5, d_sq**0.5
    norm_err = d_norm / r_norm if r_norm > 0 else (0.0 if d_norm == 0 else float("inf"))
    stats: dict[str, Any] = {
        "max_abs_err": max_abs,
        "max_rel_err": max_rel,
        "norm_err": norm_err,
        "unwritten": unwritten,
        "arbitrated": arbitrated,
        "differ": bool(n_bad),
        "message": "",
    }
    if n_bad and first is not None:
        idx = tuple(int(i) for i in torch.unravel_index(torch.tensor(first), exp.shape))
        got, want = float(af[first]), float(rf[first])
        what = f"{n_bad} of {rf.numel()} elements differ"
        if arbitrated:
            what += (f" (and {arbitrated} more outside the tolerance that the float64 answer "
                     "excused)")
        if unwritten:
            what += f" ({unwritten} NaN where the reference is finite: never written?)"
        tols = (
            f"{widened}; rtol={tol.rtol:g}" if widened else f"atol={tol.atol:g}, rtol={tol.rtol:g}"
        )
        stats["message"] = (
            f"{what}; max abs error {max_abs:.3g}; first at index {idx}: got {got:.6g}, "
            f"expected {want:.6g} ({tols})"
        )
    elif r_norm > 0 and norm_err > norm_tolerance(tol):
        # the float64 answer arbitrates this too: a reference that cancels (x + 0.5 near -0.5
        # in bf16) can sit farther from it than an fp32-accurate candidate does
        if _as_close_in_norm(per_chunk, tol):
            stats["norm_arbitrated"] = 1
            return stats
        stats["differ"] = True
        stats["message"] = (
            f"normalised error {norm_err:.3g} exceeds {norm_tolerance(tol):g} although every "
            "element is within atol: the output is far too small to be the answer"
        )
    return stats


def _against_exact(r: Any, a: Any, x: Any, finite: Any, bad: Any, atol: float,
                   rtol: float) -> tuple[Any, ...]:
    """A chunk's statistics against the exact answer ``x``: ||a - x||, ||r - x|| and ||x||
    over the elements finite in all three; the reference's own misses (|r - x| beyond the
    tolerance about x) and its largest |r - x|; of the elements still ``bad``, those not finite
    and their largest |a - x|."""
    import torch

    both = finite & torch.isfinite(x)
    zero = torch.zeros((), dtype=r.dtype, device=r.device)
    r_err = torch.where(both, (r - x).abs(), zero)
    a_err = torch.where(both & bad, (a - x).abs(), zero)
    norms = tuple(torch.linalg.vector_norm(torch.where(both, v, zero), dtype=torch.float64)
                  for v in (a - x, r - x, x))
    return (*norms, (r_err > atol + rtol * x.abs()).sum().double(), r_err.max().double(),
            (bad & ~both).sum().double(), a_err.max().double())


def _misses_like_the_reference(per_chunk: list[list[float]], n_bad: int, numel: int,
                               atol: float, rtol: float) -> bool:
    """With the exact answer known (per-chunk statistics past column 6): the elements still
    outside the tolerance are all finite, no more than REF_ERROR_FACTOR times the reference's
    own misses of the exact answer plus STRAY_FRACTION of the output, and none farther from it
    than the reference's farthest miss (plus the tolerance). Where the reference is
    ill-conditioned an honest candidate misses the exact answer about as often and by about as
    much, elsewhere; where it is exact, its farthest miss is a rounding and nothing farther
    passes."""
    if not per_chunk or len(per_chunk[0]) < 14:
        return False
    ref_misses = sum(row[10] for row in per_chunk)
    ref_worst = max(row[11] for row in per_chunk)
    not_finite = sum(row[12] for row in per_chunk)
    worst = max(row[13] for row in per_chunk)
    return (not_finite == 0 and n_bad <= REF_ERROR_FACTOR * ref_misses + numel * STRAY_FRACTION
            and worst <= (1.0 + rtol) * ref_worst + atol)


def _as_close_in_norm(per_chunk: list[list[float]], tol: Tolerance) -> bool:
    """With the exact answer known (per-chunk distances in columns 7-9): the candidate's
    normalised error against it is within the bound, or no more than ``REF_ERROR_FACTOR``
    times the reference's own; or the reference misses the exact answer by as much as the
    answer's whole norm. Then the answer is zero but for rounding (the mean of a normalised
    tensor: 1e-17 in float64, 7e-8 from the fp32 reference), each honest summation order
    returns its own noise (an order that sums sequentially, 30 times the reference's), and
    there is no signal for the normalised error to find missing: the element-wise tolerance,
    which held, decides. Zeros stay refused wherever the reference carries the answer."""
    if not per_chunk or len(per_chunk[0]) < 10:
        return False
    a_x, r_x, x = (sum(row[k] ** 2 for row in per_chunk) ** 0.5 for k in (7, 8, 9))
    if r_x >= x:
        return True
    return bool(a_x <= max(norm_tolerance(tol) * x, REF_ERROR_FACTOR * r_x))


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


_SAME_SIZE_INTS = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


def _bitwise_equal(p: Any, a: Any) -> bool:
    """The same bits: a value comparison would miss a flipped zero sign or a changed NaN
    payload, either enough to mark inputs it has seen."""
    import torch

    if p.is_floating_point() and p.element_size() in _SAME_SIZE_INTS:
        bits = getattr(torch, _SAME_SIZE_INTS[p.element_size()])
        return torch.equal(p.contiguous().view(bits), a.contiguous().view(bits))
    return bool(torch.equal(p, a))


# Under the fp32 policy a candidate must compute in fp32. Its error against the float64 answer
# may be several times the fp32 reference's own (another summation order, an approximate exp),
# never the hundreds to thousands of times that half precision, bfloat16 or TF32 arithmetic costs
# (their unit roundoff is 2^-11 to 2^-8 against fp32's 2^-24). The floor is a few fp32 roundings,
# for outputs the reference computes exactly (its own error 0).
PRECISION_FACTOR = 16.0
PRECISION_FLOOR = 64 * 2.0**-23


def precision_shortfall(actual: list[Any], exact: list[Any] | None, reference: list[Any]) -> str:
    """Why ``actual`` is less accurate than fp32 arithmetic allows; empty when it is not.

    ``exact`` are the float64 outputs, ``reference`` the fp32 reference's; errors are normalised
    (``||out - exact||_2 / ||exact||_2`` over elements finite in both).
    """
    if exact is None or len(exact) != len(actual) or len(reference) != len(actual):
        return ""
    for i, (a, x, r) in enumerate(zip(actual, exact, reference, strict=True)):
        if not (a.is_floating_point() and x.is_floating_point()) or a.shape != x.shape:
            continue
        cand = _normalised_error(a, x)
        ref = _normalised_error(r, x)
        if cand is None or ref is None:
            continue
        bound = max(PRECISION_FACTOR * ref, PRECISION_FLOOR)
        if cand > bound:
            return (
                f"output {i}: normalised error {cand:.2g} against a float64 run, where the fp32 "
                f"reference's is {ref:.2g} (bound {bound:.2g}): arithmetic below the fp32 "
                "policy's precision (half precision, bfloat16 or TF32?)"
            )
    return ""


def _normalised_error(a: Any, x: Any) -> float | None:
    import torch

    af, xf = _flat(a), _flat(x.to(a.device))
    rows = []  # per chunk, on the device until one read-back (see _compare_floating)
    for start in range(0, xf.numel(), CHUNK):
        ac = af[start : start + CHUNK]
        xc = xf[start : start + CHUNK].double()  # ac - xc is then computed in float64
        finite = torch.isfinite(ac) & torch.isfinite(xc)
        rows.append(torch.stack([
            torch.linalg.vector_norm(torch.where(finite, ac - xc, 0.0)),
            torch.linalg.vector_norm(torch.where(finite, xc, 0.0)),
        ]))
    per_chunk = torch.stack(rows).tolist() if rows else []
    d_sq = sum(row[0] ** 2 for row in per_chunk)
    x_sq = sum(row[1] ** 2 for row in per_chunk)
    if x_sq == 0.0:
        return None
    return float((d_sq / x_sq) ** 0.5)
