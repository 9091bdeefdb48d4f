"""The reduction skills: their conditions with reasons, and their shape-aware defaults (the
rules of ``design/families/reduction/defaults.py``; measurements in its ``measurements.csv``)."""

from __future__ import annotations

from dataclasses import replace

from kernelwright.skills import SkillLibrary
from kernelwright.skills.conditions import GroupFacts, check
from kernelwright.skills.heuristics import defaults_for, warps_for


def facts(**kw: object) -> GroupFacts:
    base: dict[str, object] = dict(
        kind="reduction",
        schedule="row",
        domain=(4096, 8192),
        reduced_length=8192,
        parallel_length=4096,
        n_passes=2,
    )
    return GroupFacts(**{**base, **kw})  # type: ignore[arg-type]


def test_row_fits_in_one_block_accepts_and_refuses_with_reasons() -> None:
    lib = SkillLibrary.builtin()
    (ok,) = [a for a in lib.assess(facts()) if a.skill.id == "row-onepass"]
    assert ok.ok and "8192 <= 32768" in " ".join(ok.reasons)
    (no,) = [a for a in lib.assess(facts(reduced_length=70000)) if a.skill.id == "row-onepass"]
    assert not no.ok and no.reasons == ("reduced extent 70000 > max block 32768",)


def test_split_needs_few_outputs_a_long_reduction_and_one_sweep() -> None:
    lib = SkillLibrary.builtin()
    split = lib.get("split-reduction")
    good = facts(parallel_length=1, reduced_length=1 << 20, n_passes=1, splittable=True)
    assert all(check(c, good).ok for c in split.conditions)
    many = facts(parallel_length=1 << 20, reduced_length=1 << 20, splittable=True)
    reasons = [check(c, many).reason for c in split.conditions if not check(c, many).ok]
    assert reasons == [f"{1 << 20} output positions > 8448: enough parallel work already"]
    dependent = facts(parallel_length=1, reduced_length=1 << 20, splittable=False)
    assert "partials cannot be combined" in check(split.conditions[0], dependent).reason


def test_modifiers_hold_only_with_their_pattern() -> None:
    lib = SkillLibrary.builtin()
    online = lib.get("online-softmax")
    assert not check(online.conditions[0], facts()).ok
    assert check(online.conditions[0], facts(online_pattern=True)).ok
    assert online.is_modifier and "looped" in online.modifies


def test_a_column_softmax_takes_narrow_tiles_in_few_warps() -> None:
    """Log-softmax over 150 channels (H200: 256 x 16 in 4 warps 0.355 ms, 256 x 32 in 16 warps
    0.420 ms); an L2 norm over 256 channels keeps the wide tile it measured fastest."""
    col = facts(schedule="column", inner_length=65536, parallel_length=16 * 65536)
    soft = defaults_for("column_onepass", replace(col, reduced_length=150, online_pattern=True))
    assert (soft["TILE"] // 256, soft["WARPS"]) == (16, 4)
    norm = defaults_for("column_onepass", replace(col, reduced_length=256))
    assert (norm["TILE"] // 256, norm["WARPS"]) == (32, 16)


def test_defaults_grow_warps_with_the_row() -> None:
    assert [warps_for(b) for b in (1024, 4096, 16384, 65536)] == [4, 8, 16, 32]
    d = defaults_for("row_onepass", facts(reduced_length=100))
    assert d["ROWS"] == 32 and d["WARPS"] == 8
    d = defaults_for("row_onepass", facts(reduced_length=32768))
    assert d["ROWS"] == 1 and d["WARPS"] == 32 and d["ONEPASS_MAX"] >= 32768


def test_short_rows_never_span_two_warps() -> None:
    """A 1000-element row written back (a softmax): 4 rows per program, one warp each (H200,
    cross-entropy: 4 warps 0.31 ms, 8 warps 0.46 ms), so the row's reductions stay warp
    shuffles."""
    d = defaults_for("row_onepass", facts(reduced_length=1000))
    assert (d["ROWS"], d["WARPS"]) == (4, 4)
    assert defaults_for("row_onepass", facts(reduced_length=4096))["WARPS"] == 8


def test_rows_reduced_to_per_row_results_hold_32_values_a_thread() -> None:
    """A loss's rows (nothing written along the row): 32 values a thread, as the H200 sweeps of
    the smoothed cross-entropy (1000 classes: 2 rows in 2 warps) and KL (2048: 4 rows in 8
    warps) found; other lengths, and rows written back, keep the general rule."""
    loss = facts(reduced_length=1000, full_outputs=False)
    d = defaults_for("row_onepass", loss)
    assert (d["ROWS"], d["WARPS"]) == (2, 2) and d["TILE"] >= 2 * 1024
    d = defaults_for("row_onepass", replace(loss, reduced_length=2048))
    assert (d["ROWS"], d["WARPS"]) == (4, 8) and d["TILE"] >= 4 * 2048
    written = defaults_for("row_onepass", facts(reduced_length=2048))
    assert (written["ROWS"], written["WARPS"]) == (2, 8)  # 16 values a thread
    assert defaults_for("row_onepass", replace(loss, reduced_length=8192)) == defaults_for(
        "row_onepass", facts(reduced_length=8192)
    )


def test_column_sweeps_use_few_reduced_rows_of_wide_contiguous_tiles() -> None:
    """A sum over 171 rows of 64 x 65536 positions: 8 rows x 512 positions per step, 4 warps
    (each thread holds every row of the tile: the reduction stays in registers). Argmax keeps
    an index beside each value, so its tile holds half the rows in half the warps (H200: 0.665
    ms against 0.82 ms)."""
    column = facts(schedule="column", reduced_length=171, parallel_length=64 * 65536)
    d = defaults_for("column_looped", replace(column, inner_length=65536))
    assert (d["LOOP_BLOCK"], d["LOOP_COLS"], d["LOOP_WARPS"]) == (8, 512, 4)
    d = defaults_for("column_looped", replace(column, inner_length=65536, indexed=True))
    assert (d["LOOP_BLOCK"], d["LOOP_COLS"], d["LOOP_WARPS"]) == (4, 512, 2)
    # few positions: narrower tiles (more programs, at least 4 per SM where they can be had),
    # each in 16 warps over 2048 elements a step (H200, min over 4095 of 64 x 4095 x 1023:
    # 0.272 ms against 0.398 for 32 x 128 tiles in 4 warps)
    few = defaults_for(
        "column_looped", facts(schedule="column", inner_length=4096, parallel_length=4096)
    )
    assert (few["LOOP_COLS"], few["LOOP_BLOCK"], few["LOOP_WARPS"]) == (32, 64, 16)
    strided = facts(schedule="column", reduced_length=4095, inner_length=1023)
    d = defaults_for("column_looped", replace(strided, parallel_length=64 * 1023))
    assert (d["LOOP_COLS"], d["LOOP_BLOCK"], d["LOOP_WARPS"]) == (64, 32, 16)
    d = defaults_for("column_looped", replace(strided, parallel_length=64 * 1023,
                                              dtypes=("float32",)))
    assert (d["LOOP_COLS"], d["LOOP_BLOCK"], d["LOOP_WARPS"]) == (64, 32, 16)
    # enough positions at full width: the tile is left alone where rows are 16-byte aligned
    d = defaults_for("column_looped", replace(strided, parallel_length=1024 * 1023))
    assert (d["LOOP_COLS"], d["LOOP_BLOCK"], d["LOOP_WARPS"]) == (512, 8, 4)
    d = defaults_for("column_looped", replace(strided, parallel_length=1024 * 1023,
                                              inner_length=1024, dtypes=("float32",)))
    assert (d["LOOP_COLS"], d["LOOP_BLOCK"], d["LOOP_WARPS"]) == (512, 8, 4)


def test_columns_of_unaligned_rows_take_narrow_tall_tiles() -> None:
    """Sum and argmax over the middle axis of (128, 4096, 4095) fp32: each reduced row starts
    off a 16-byte boundary, so loads are single values whatever the tile. 64 positions x 16
    rows in 8 warps: 2.10 and 2.03 ms on an H200, against 3.08 ms (8 x 512 in 4 warps) and 7.94
    ms (4 x 512 in 2 warps) for the aligned rule's tiles. Half-precision rows of 4095 are
    unaligned too; fp32 rows of 4096 are not."""
    middle = facts(schedule="column", reduced_length=4096, parallel_length=128 * 4095,
                   inner_length=4095, dtypes=("float32",))
    for indexed in (False, True):
        d = defaults_for("column_looped", replace(middle, indexed=indexed))
        assert (d["LOOP_BLOCK"], d["LOOP_COLS"], d["LOOP_WARPS"]) == (16, 64, 8)
    d = defaults_for("column_looped", replace(middle, dtypes=("bfloat16",)))
    assert (d["LOOP_BLOCK"], d["LOOP_COLS"], d["LOOP_WARPS"]) == (16, 64, 8)
    d = defaults_for("column_looped", replace(middle, inner_length=4096, dtypes=("float32",)))
    assert (d["LOOP_BLOCK"], d["LOOP_COLS"], d["LOOP_WARPS"]) == (8, 512, 4)
    lib = SkillLibrary.builtin()
    for sid in ("column-looped", "column-onepass"):
        p = {x.name: x.values for x in lib.get(sid).params}
        assert {4, 8, 16} <= set(p["LOOP_BLOCK"]) and {256, 512, 1024} <= set(p["LOOP_COLS"])
    assert lib.get("column-looped").param("LOOP_COLS").tune


def test_column_onepass_needs_a_second_sweep_to_pay() -> None:
    lib = SkillLibrary.builtin()
    col = facts(schedule="column", inner_length=65536, reduced_length=171)
    (single,) = [x for x in lib.assess(replace(col, n_passes=1)) if x.skill.id == "column-onepass"]
    assert not single.ok and "single sweep" in " ".join(single.reasons)
    (multi,) = [x for x in lib.assess(replace(col, n_passes=3)) if x.skill.id == "column-onepass"]
    assert multi.ok and any("reads it once" in r for r in multi.reasons)


def test_short_columns_in_one_pass_take_64_positions_in_4_warps() -> None:
    """An RMS norm over 64 features (H200: 64 x 64 tiles in 4 warps 0.261 ms, 64 x 128 in 16
    warps 0.355); columns of 256 (an L2 norm over channels) keep 32 positions in 16 warps, and a
    softmax over a column keeps its narrow tile."""
    column = facts(schedule="column", inner_length=65536, parallel_length=32 * 65536)
    d = defaults_for("column_onepass", replace(column, reduced_length=64))
    assert (d["COLS"], d["WARPS"], d["TILE"]) == (64, 4, 64 * 64)
    d = defaults_for("column_onepass", replace(column, reduced_length=256))
    assert (d["COLS"], d["WARPS"]) == (32, 16)
    d = defaults_for("column_onepass", replace(column, reduced_length=64, online_pattern=True))
    assert (d["COLS"], d["WARPS"]) == (16, 4)


def test_column_onepass_loads_across_the_contiguous_positions() -> None:
    lib = SkillLibrary.builtin()
    col = facts(schedule="column", inner_length=65536, reduced_length=150)
    (a,) = [x for x in lib.assess(col) if x.skill.id == "column-onepass"]
    assert a.ok and any("65536 contiguous positions" in r for r in a.reasons)
