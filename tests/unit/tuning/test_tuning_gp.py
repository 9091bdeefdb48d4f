"""GP math: LOO-CRPS against brute-force refits, analytic gradients against finite differences."""

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from kernelwright.tuning.gp.features import Feature, FeatureTable, structured_features
from kernelwright.tuning.gp.kernels import Base, Product, Sum
from kernelwright.tuning.gp.library import default_kernel, gpu_kernel
from kernelwright.tuning.gp.loo import gaussian_crps, loo_crps, loo_crps_objective, loo_predictive
from kernelwright.tuning.gp.model import condition, default_hypers, fit, neg_log_posterior


def _data(measured, n, rng):
    rows = np.sort(rng.choice(np.flatnonzero(measured.ok), size=n, replace=False))
    y = np.log(measured.times_ms[rows])
    return rows, (y - y.mean()) / y.std()


def _kernels(space):
    numeric, categorical = structured_features(space)
    return [
        gpu_kernel(space),
        default_kernel(space),
        Sum(
            (Base("m32", numeric[:2]), Product((Base("se", numeric[1:]), Base("cat", categorical))))
        ),
    ]


@pytest.mark.parametrize("which", [0, 1, 2])
def test_loo_crps_matches_brute_force_refits(measured, rng, which):
    table = FeatureTable(measured.space)
    rows, y = _data(measured, 25, rng)
    extra = np.where(np.arange(25) % 5 == 0, 0.05, 0.0)  # warm-start style per-point noise
    kernel = _kernels(measured.space)[which]
    phi = default_hypers(kernel).flat() + rng.normal(
        0.0, 0.3, size=kernel.n_hyper + (2 if not isinstance(kernel, Sum) else 1)
    )
    from kernelwright.tuning.gp.model import _unflat  # the fixed hyperparameters of the test

    hypers = _unflat(kernel, phi)
    gp = condition(kernel, hypers, table, rows, y, extra)
    mu_loo, var_loo = loo_predictive(gp.chol, gp.y)
    for i in range(len(rows)):
        keep = np.arange(len(rows)) != i
        sub = condition(kernel, hypers, table, rows[keep], y[keep], extra[keep])
        mean, var = sub.predict(rows[i : i + 1])
        var_y = var[0] + gp.noise + extra[i]  # predictive variance of the observation y_i
        assert mu_loo[i] == pytest.approx(mean[0], abs=1e-8)
        assert var_loo[i] == pytest.approx(var_y, abs=1e-8)
    brute = np.mean(
        [
            gaussian_crps(np.array([y[i]]), np.array([mu_loo[i]]), np.array([var_loo[i]]))[0]
            for i in range(len(rows))
        ]
    )
    assert loo_crps(gp) == pytest.approx(brute, abs=1e-10)


def test_gaussian_crps_against_numerical_integral():
    from scipy.integrate import quad
    from scipy.stats import norm

    y, mu, sd = 0.3, -0.2, 0.7
    integral = quad(lambda x: (norm.cdf(x, mu, sd) - (x >= y)) ** 2, -12, 12, points=[y])[0]
    assert gaussian_crps(np.array([y]), np.array([mu]), np.array([sd**2]))[0] == pytest.approx(
        integral, abs=1e-7
    )


@pytest.mark.parametrize("which", [0, 2])
def test_marginal_likelihood_and_loo_gradients(measured, rng, which):
    table = FeatureTable(measured.space)
    rows, y = _data(measured, 20, rng)
    kernel = _kernels(measured.space)[which]
    phi = default_hypers(kernel).flat() + rng.normal(
        0.0, 0.3, size=default_hypers(kernel).flat().size
    )
    extra = np.zeros(len(rows))
    for objective in (neg_log_posterior, loo_crps_objective):
        value, grad = objective(phi, kernel, table, rows, y, extra)
        numeric = approx_fprime(
            phi, lambda p, f=objective: f(p, kernel, table, rows, y, extra)[0], 1e-6
        )
        assert np.allclose(grad, numeric, rtol=1e-3, atol=1e-4 * max(1.0, abs(value)))


def test_fit_is_capped_and_improves_the_posterior(measured, rng):
    table = FeatureTable(measured.space)
    rows, y = _data(measured, 20, rng)
    kernel = gpu_kernel(measured.space)
    start = default_hypers(kernel).flat()
    gp = fit(kernel, table, rows, y, max_iter=2)  # BoTorch's habit: tests cap the optimiser
    zeros = np.zeros(len(rows))
    assert (
        neg_log_posterior(gp.hypers.flat(), kernel, table, rows, y, zeros)[0]
        <= (neg_log_posterior(start, kernel, table, rows, y, zeros)[0])
    )
    mean, var = gp.predict(np.arange(len(measured.space)))
    assert mean.shape == var.shape == (len(measured.space),)
    assert np.all(var > 0)


def test_kernel_expressions_read_as_math(measured):
    k = Product(
        (
            Base("m52", (Feature(("block_x",)), Feature(("block_x", "block_y")))),
            Base("cat", (Feature(("use_smem",), "cat"),)),
        )
    )
    assert str(k) == "M52(log2 block_x, log2(block_x·block_y)) × Cat(use_smem)"
    s = Sum((k, Base("se", (Feature(("tile",), "lin"),))))
    assert str(s) == "M52(log2 block_x, log2(block_x·block_y)) × Cat(use_smem) + SE(tile)"
    assert str(Product((s, k))).startswith("(M52")


def test_structured_features_include_constrained_products(measured):
    numeric, categorical = structured_features(measured.space)
    names = [str(f) for f in numeric]
    assert "log2(block_x·block_y)" in names  # from the restriction block_x * block_y <= 512
    # tile takes 1-4: whether it is a power of two is a category too
    assert [str(f) for f in categorical] == ["use_smem", "pow2? tile"]


def test_sizes_that_mix_powers_of_two_with_other_values_get_a_power_of_two_category():
    from kernelwright.tuning import Kind, Param, Space

    space = Space((Param("block_size_x", (16, 32, 48, 64, 80), Kind.INT, log=True),
                   Param("BLOCK_N", (32, 64, 128), Kind.POW2),
                   Param("use_smem", (0, 1), Kind.CATEGORICAL)))
    _, categorical = structured_features(space)
    # powers of two only: no such category (it would never vary); flags keep their own
    assert [str(f) for f in categorical] == ["use_smem", "pow2? block_size_x"]
    column = FeatureTable(space).column(Feature(("block_size_x",), "pow2"))
    values = space.column("block_size_x").tolist()
    assert {v: c for v, c in zip(values, column.tolist(), strict=True)} == {
        16: 1.0, 32: 1.0, 48: 0.0, 64: 1.0, 80: 0.0}


def test_declared_derived_quantities_become_features():
    from kernelwright.tuning import Kind, Param, Space

    space = Space(
        (Param("BLOCK_M", (32, 64, 128), Kind.POW2), Param("BLOCK_N", (32, 64, 128), Kind.POW2)),
        derived={"warps": "BLOCK_M * BLOCK_N / 1024"},
    )
    numeric, _ = structured_features(space)
    assert "log2(BLOCK_M·BLOCK_N)" in [str(f) for f in numeric]
