"""Conditions of the reduction skills: sweeps, folds, splits and teams."""

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
