"""The live-tuning API: ask, measure elsewhere, tell; warm start; errors at the boundary."""

import pytest
from tuning_synthetic import synthetic_time

from kernelwright.errors import ConfigError
from kernelwright.tuning import Kind, Param, Space, Tuner

FAST = {"max_iter": 5, "dense_until": 8, "refit_every": 4}


def _space() -> Space:
    return Space(
        (
            Param("block_x", (16, 32, 64, 128, 256), Kind.POW2),
            Param("block_y", (1, 2, 4, 8), Kind.POW2),
            Param("tile", (1, 2, 3, 4), Kind.INT),
            Param("use_smem", (0, 1), Kind.CATEGORICAL),
        ),
        restrictions=("block_x * block_y <= 512",),
    )


def test_ask_measure_tell_loop_finds_a_fast_config():
    from kernelwright.tuning.strategies import get_strategy

    tuner = Tuner(_space(), strategy=get_strategy("bo", **FAST), seed=0)
    for _ in range(6):
        for cfg in tuner.ask(3):
            t = synthetic_time(cfg["block_x"], cfg["block_y"], cfg["tile"], cfg["use_smem"])
            tuner.tell(cfg, t, failed=t is None)
    assert tuner.n_evaluated == 18
    best = tuner.best
    assert best is not None and best[1] < 1.0


def test_pending_configs_are_not_asked_twice():
    tuner = Tuner(_space(), strategy="random", seed=1)
    first, second = tuner.ask(4), tuner.ask(4)
    keys = {tuple(c.values()) for c in first + second}
    assert len(keys) == 8


def test_same_seed_same_suggestions_and_resume_from_history():
    a = Tuner(_space(), strategy="tpe", seed=7)
    cfgs = a.ask(2)
    for c in cfgs:
        a.tell(c, 1.0 + c["tile"])
    b = Tuner(_space(), strategy="tpe", seed=7, history=a.history)
    assert a.ask(1) == b.ask(1)


def test_warm_start_uses_valid_priors_first():
    tuner = Tuner(_space(), strategy="bo", seed=0)
    priors = [
        ({"block_x": 64, "block_y": 2, "tile": 2, "use_smem": 1}, 0.7),
        ({"block_x": 256, "block_y": 8, "tile": 1, "use_smem": 0}, 0.5),  # invalid here: skipped
        ({"block_x": 16, "block_y": 1, "tile": 4, "use_smem": 0}, 3.0),
        ({"block_x": 32, "block_y": 1, "tile": 1, "use_smem": 0}, None),
    ]
    assert tuner.warm_start(priors, source="M=2048") == 3
    assert tuner.n_evaluated == 0
    assert tuner.ask(1) == [priors[0][0]]


def test_bad_tells_are_config_errors():
    tuner = Tuner(_space(), strategy="random")
    with pytest.raises(ConfigError, match="not in the space"):
        tuner.tell({"block_x": 256, "block_y": 8, "tile": 1, "use_smem": 0}, 1.0)
    with pytest.raises(ConfigError, match="positive"):
        tuner.tell({"block_x": 16, "block_y": 1, "tile": 1, "use_smem": 0}, -1.0)
    with pytest.raises(ConfigError, match="replay only"):
        pytest.importorskip("kernel_tuner")
        Tuner(_space(), strategy="kt-pso")
