"""Conditions of the reduction skills: sweeps, folds, splits, teams and few long rows."""

from __future__ import annotations

from kernelwright.skills.base import Fail, Ok, Outcome
from kernelwright.skills.conditions import GroupFacts, condition


@condition("multi_pass")
def multi_pass(f: GroupFacts) -> Outcome:
    if f.n_passes > 1:
        return Ok(f"{f.n_passes} dependent sweeps of each row")
    return Fail("a single sweep: nothing to fold")


@condition("rereads_extent")
def rereads_extent(f: GroupFacts) -> Outcome:
    if f.n_passes > 1:
        return Ok(
            f"{f.n_passes} sweeps of the reduced extent: holding it in registers reads it once"
        )
    return Fail(
        "a single sweep reads each element once in any schedule: the looped kernel's small "
        "tiles reduce per lane without padding the reduced extent to a power of two"
    )


@condition("stats_then_write")
def stats_then_write(f: GroupFacts) -> Outcome:
    if f.stats_then_write:
        return Ok("one sweep of statistics, then one write sweep: slices can share the statistics")
    return Fail("not a statistics sweep followed by a write sweep")


@condition("team_resident")
def team_resident(f: GroupFacts, slice_max: int) -> Outcome:
    """A team waits for all of its programs: it must fit on the GPU at once (one per SM)."""
    limit = slice_max * f.sm_count
    if f.reduced_length <= limit:
        return Ok(
            f"reduced extent {f.reduced_length} <= {f.sm_count} SMs x {slice_max}: a team of "
            "slices is resident at once"
        )
    return Fail(
        f"reduced extent {f.reduced_length} > {f.sm_count} SMs x {slice_max}: a team would "
        "wait for programs that cannot start"
    )


@condition("few_long_rows")
def few_long_rows(f: GroupFacts, rows_per_sm: int, min_length: int) -> Outcome:
    """Rows too few for one program each to fill the GPU (fewer than ``rows_per_sm`` per SM),
    and long enough that slices of them do (``min_length`` elements or more)."""
    limit = rows_per_sm * f.sm_count
    if f.parallel_length >= limit:
        return Fail(
            f"{f.parallel_length} rows >= {rows_per_sm} x {f.sm_count} SMs: one program a row "
            "fills the GPU"
        )
    if f.reduced_length < min_length:
        return Fail(
            f"rows of {f.reduced_length} < {min_length} elements: too few slices a row to pay "
            "for a second launch"
        )
    return Ok(
        f"{f.parallel_length} rows < {rows_per_sm} x {f.sm_count} SMs, rows of "
        f"{f.reduced_length} >= {min_length}: slices of the rows fill the GPU"
    )


@condition("online_softmax_pattern")
def online_softmax_pattern(f: GroupFacts) -> Outcome:
    if f.online_pattern:
        return Ok("sum(exp(x - max(x))) follows max(x): fold both into one sweep")
    return Fail("no sum of exponentials after a maximum")


@condition("welford_pattern")
def welford_pattern(f: GroupFacts) -> Outcome:
    if f.welford_pattern:
        return Ok("variance of (x - mean(x)) follows mean(x): one Welford sweep")
    return Fail("no variance after a mean")


@condition("splittable")
def splittable(f: GroupFacts) -> Outcome:
    if f.splittable:
        return Ok("one sweep, per-position results only: partials combine exactly")
    return Fail("dependent sweeps, full-size outputs or a gather: partials cannot be combined")
