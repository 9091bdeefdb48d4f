import itertools
from pathlib import Path

import pytest
from tuning_synthetic import PARAMS, RESTRICTIONS

from kernelwright.errors import ConfigError
from kernelwright.tuning.measured import load_measured_csv
from kernelwright.tuning.space import Kind, Param, Space


def test_enumeration_matches_brute_force():
    params = (
        Param("BLOCK_M", (16, 32, 64, 128), Kind.POW2),
        Param("BLOCK_N", (16, 32, 64, 128), Kind.POW2),
        Param("BLOCK_K", (32, 64), Kind.POW2),
        Param("stages", (2, 3, 4), Kind.INT),
        Param("layout", ("row", "col"), Kind.CATEGORICAL),
    )
    smem = "(BLOCK_M + BLOCK_N) * BLOCK_K * stages * 2 <= 48 * 1024"
    space = Space(params, (smem, "BLOCK_M * BLOCK_N <= 64 * 64"))
    expected = [
        c
        for c in itertools.product(*(p.values for p in params))
        if (c[0] + c[1]) * c[2] * c[3] * 2 <= 48 * 1024 and c[0] * c[1] <= 64 * 64
    ]
    assert sorted(space.table, key=str) == sorted(expected, key=str)
    cfg = space.config(3)
    assert space.index(cfg) == 3


def test_index_normalises_json_and_csv_values():
    space = Space((Param("a", (1, 2, 4), Kind.POW2), Param("kind", ("x", "y"), Kind.CATEGORICAL)))
    assert space.index({"a": 2.0, "kind": "y"}) == space.index({"a": 2, "kind": "y"})
    assert space.index({"a": "4", "kind": "x"}) is not None
    assert space.index({"a": 3, "kind": "x"}) is None
    assert space.index({"a": 2}) is None
    with pytest.raises(ConfigError, match="misses"):
        space.require_index({"a": 2})


def test_param_kind_inference():
    assert Param.infer("flag", [0, 1]).kind is Kind.CATEGORICAL
    assert Param.infer("bs", [16, 32, 64]).kind is Kind.POW2
    p = Param.infer("bx", [16, 48, 80, 256])
    assert p.kind is Kind.INT and p.log
    assert not Param.infer("stride", [0, 1, 2]).log
    assert Param.infer("variant", ["a", "b", "c"]).kind is Kind.CATEGORICAL


def test_invalid_params_and_restrictions_fail_early():
    with pytest.raises(ConfigError, match="pow2"):
        Param("a", (3, 4), Kind.POW2)
    with pytest.raises(ConfigError, match="repeats"):
        Param("a", (4, 4))
    with pytest.raises(ConfigError, match="not parameters"):
        Space((Param("a", (1, 2)),), ("b > 1",))
    with pytest.raises(ConfigError, match="no valid"):
        _ = Space((Param("a", (1, 2)),), ("a > 5",)).table


def test_csv_loader_keeps_failures_and_treats_absent_configs_as_invalid(measured):
    space = measured.space
    n_cart = 1
    for v in PARAMS.values():
        n_cart *= len(v)
    assert len(space) < n_cart  # block_x * block_y > 512 is absent from the file
    assert space.index({"block_x": 256, "block_y": 8, "tile": 1, "use_smem": 0}) is None
    failed = [r for r in range(len(space)) if not measured.ok[r]]
    assert failed and all(measured.lookup(r) is None for r in failed)
    assert measured.best_ms == pytest.approx(0.7)
    assert space.restrictions == RESTRICTIONS


def test_csv_loader_reports_bad_files(tmp_path: Path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,time\n1,2,3\n")
    with pytest.raises(ConfigError, match="missing columns"):
        load_measured_csv(bad)
    bad.write_text("a,time_ms,status\n1,,ok\n")
    with pytest.raises(ConfigError, match="time_ms"):
        load_measured_csv(bad)
    with pytest.raises(ConfigError, match="no such"):
        load_measured_csv(tmp_path / "missing.csv")


def test_restrictions_read_from_a_sibling_index(tmp_path: Path, space_csv: Path):
    import json

    (space_csv.parent / "index.json").write_text(
        json.dumps({"datasets": [{"file": space_csv.name, "restrictions": list(RESTRICTIONS)}]})
    )
    assert load_measured_csv(space_csv).space.restrictions == RESTRICTIONS


BUNDLED = Path(__file__).resolve().parents[3] / "data" / "tuning"  # the repository's data/tuning


def test_restrictions_reproduce_the_brute_forced_spaces():
    """Enumerating each index.json space that lists restrictions gives exactly the measured set."""
    import json

    datasets = json.loads((BUNDLED / "index.json").read_text())["datasets"]
    with_restrictions = [e for e in datasets if "restrictions" in e]
    assert with_restrictions
    for entry in with_restrictions:
        params = tuple(Param.infer(k, v) for k, v in entry["tune_params"].items())
        space = Space(params, tuple(entry["restrictions"]))
        measured = load_measured_csv(BUNDLED / entry["file"])
        assert set(space.table) == set(measured.space.table), entry["file"]
