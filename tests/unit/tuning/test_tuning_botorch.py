"""GPyTorch/BoTorch carry the same GP as the NumPy path (``bo-botorch``, a comparison strategy):
the same MAP optimum, the same posterior at the same hyperparameters, the same LOO-CRPS."""

import numpy as np
import pytest

from kernelwright.tuning.gp.features import FeatureTable
from kernelwright.tuning.gp.library import gpu_kernel
from kernelwright.tuning.gp.loo import loo_crps
from kernelwright.tuning.gp.model import default_hypers, fit, neg_log_posterior
from kernelwright.tuning.replay import run_once
from kernelwright.tuning.strategies import get_strategy

pytest.importorskip("botorch")
pytest.importorskip("gpytorch")

FAST_BO = {"max_iter": 5, "dense_until": 8, "refit_every": 4}


@pytest.fixture
def data(measured):
    rows = np.random.default_rng(0).choice(np.flatnonzero(measured.ok), 24, replace=False)
    t = np.log(measured.times_ms[rows])
    return FeatureTable(measured.space), gpu_kernel(measured.space), rows, (t - t.mean()) / t.std()


def test_gpytorch_reaches_the_numpy_map_optimum_and_posterior(data):
    from kernelwright.tuning.gp.gpytorch_model import TorchGPFactory
    from kernelwright.tuning.gp.gpytorch_model import loo_crps as torch_loo_crps

    table, kernel, rows, y = data
    extra = np.zeros(len(rows))
    ours = fit(kernel, table, rows, y, max_iter=60)
    factory = TorchGPFactory(table, kernel)
    theirs = factory.fit(rows, y, extra, [default_hypers(kernel)], 60)
    objective = [
        neg_log_posterior(h.flat(), kernel, table, rows, y, extra)[0] for h in (ours.hypers, theirs)
    ]
    assert objective[1] == pytest.approx(objective[0], abs=1e-3)
    same = factory.condition(ours.hypers, rows, y, extra)
    cand = np.arange(len(table.space))
    (mu, var), (mu_t, var_t) = ours.predict(cand), same.predict(cand)
    np.testing.assert_allclose(mu_t, mu, atol=1e-9)
    np.testing.assert_allclose(var_t, var, atol=1e-9)
    assert torch_loo_crps(same) == pytest.approx(loo_crps(ours), abs=1e-9)


def test_bo_botorch_runs_the_bo_loop(measured):
    rows, _ = run_once(measured, get_strategy("bo-botorch", **FAST_BO), 14, seed=1)
    assert len(rows) == len(set(rows)) == 14
