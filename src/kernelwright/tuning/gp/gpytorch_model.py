"""The same GP carried by GPyTorch and BoTorch: kernels, marginal likelihood, priors, fitting,
posterior, log EI and fantasy conditioning done by the libraries (``bo-botorch``, a comparison).

    expression (gp.kernels)  ->  GPyTorch modules over one feature matrix X `(N, F)` of the space
        Base(se | m52 | m32)     RBFKernel / MaternKernel(2.5 | 1.5), ARD over its features
        Base(cat)                BoTorch's CategoricalKernel: exp(-mean_d [c != c'] / l'_d), so
                                 l'_d = l_d / D and its prior is shifted by -log D
        Product                  ProductKernel;   Sum  AdditiveKernel of ScaleKernel (weights)
        root (not a Sum)         ScaleKernel (output scale s2)
    SingleTaskGP(zero mean, no transforms) + GaussianLikelihood (noise v, or fixed extra noise per
    point plus learned v); priors Normal(mu, sd) on the log of every hyperparameter; bounds as
    Interval constraints; fit = ``fit_gpytorch_mll_scipy`` (L-BFGS-B, torch autograd), capped.

The hyperparameters are read back as ``gp.model.Hypers`` so the loop's memo, schedule and warm
starts are the NumPy path's; only the numerical work moves to the libraries.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from botorch.acquisition.analytic import LogExpectedImprovement
from botorch.models import SingleTaskGP
from botorch.models.kernels.categorical import CategoricalKernel
from botorch.optim.fit import fit_gpytorch_mll_scipy
from gpytorch.constraints import Interval
from gpytorch.kernels import (
    AdditiveKernel,
    MaternKernel,
    ProductKernel,
    RBFKernel,
    ScaleKernel,
)
from gpytorch.kernels import (
    Kernel as TorchKernel,
)
from gpytorch.likelihoods import FixedNoiseGaussianLikelihood, GaussianLikelihood
from gpytorch.means import ZeroMean
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import NormalPrior

from kernelwright.tuning.gp.features import Feature, FeatureTable
from kernelwright.tuning.gp.kernels import Base, Kernel, Product, Sum, features_of
from kernelwright.tuning.gp.model import _LOG_BOUNDS, _NOISE_PRIOR, _SCALE_PRIOR, Hypers

FloatArray = npt.NDArray[np.float64]
Rows = npt.NDArray[np.intp]
DTYPE = torch.float64

# How to read and write one log-hyperparameter block of the expression's theta (depth first).
Slot = tuple[Callable[[], torch.Tensor], Callable[[torch.Tensor], None], int]


def _interval(name: str) -> Interval:
    lo, hi = _LOG_BOUNDS[name]
    return Interval(math.exp(lo), math.exp(hi))


def _log_prior(module: TorchKernel, name: str, attr: str, mu: Any, sd: Any) -> None:
    module.register_prior(
        name,
        NormalPrior(torch.as_tensor(mu, dtype=DTYPE), torch.as_tensor(sd, dtype=DTYPE)),
        lambda m: getattr(m, attr).log(),
    )


@dataclass
class _Built:
    kernel: TorchKernel
    slots: list[Slot]


def build_kernel(kernel: Kernel, columns: dict[Feature, int]) -> _Built:
    """GPyTorch modules for ``kernel``; ``slots`` read and write its theta, depth first."""
    if isinstance(kernel, Base):
        dims = torch.tensor([columns[f] for f in kernel.features])
        d = len(kernel.features)
        mu, sd = kernel.prior()
        shift = math.log(d) if kernel.family == "cat" else 0.0  # mean vs sum over dimensions
        k: TorchKernel
        if kernel.family == "cat":
            k = CategoricalKernel(
                ard_num_dims=d, active_dims=dims, lengthscale_constraint=_interval("ell")
            )
        elif kernel.family == "se":
            k = RBFKernel(ard_num_dims=d, active_dims=dims, lengthscale_constraint=_interval("ell"))
        else:
            nu = 2.5 if kernel.family == "m52" else 1.5
            k = MaternKernel(
                nu=nu, ard_num_dims=d, active_dims=dims, lengthscale_constraint=_interval("ell")
            )
        _log_prior(k, "log_lengthscale_prior", "lengthscale", mu - shift, sd)
        base = k

        def get() -> torch.Tensor:
            ell: torch.Tensor = base.lengthscale.detach().reshape(-1)
            return ell.log() + shift

        def put(theta: torch.Tensor) -> None:
            base.lengthscale = (theta - shift).exp().reshape(1, -1)

        return _Built(k, [(get, put, d)])
    if isinstance(kernel, Product):
        parts = [build_kernel(f, columns) for f in kernel.factors]
        return _Built(
            ProductKernel(*(p.kernel for p in parts)), [s for p in parts for s in p.slots]
        )
    parts = [build_kernel(t, columns) for t in kernel.terms]
    scaled = [ScaleKernel(p.kernel, outputscale_constraint=_interval("scale")) for p in parts]
    m = len(scaled)
    for s in scaled:
        _log_prior(s, "log_weight_prior", "outputscale", -math.log(m), 1.0)

    def get_w() -> torch.Tensor:
        return torch.stack([s.outputscale.detach().log() for s in scaled])

    def put_w(theta: torch.Tensor) -> None:
        for s, t in zip(scaled, theta, strict=True):
            s.outputscale = t.exp()

    return _Built(
        AdditiveKernel(*scaled), [(get_w, put_w, m)] + [s for p in parts for s in p.slots]
    )


@dataclass
class TorchGP:
    """A fitted BoTorch model over a space's feature matrix, with our hyperparameters' view."""

    model: SingleTaskGP
    x_all: torch.Tensor  # (N, F) features of every row of the space
    hypers: Hypers

    def predict(self, cand: Rows) -> tuple[FloatArray, FloatArray]:
        """Posterior mean and variance of the latent function, `(m,)` each."""
        with torch.no_grad():  # (m, 1, F): m marginal posteriors, not one joint (m, m) one
            post = self.model.posterior(self.x_all[torch.as_tensor(cand)].unsqueeze(-2))
            mean = post.mean.reshape(-1).numpy()
            var = post.variance.reshape(-1).clamp_min(1e-12).numpy()
        return mean, var


class TorchGPFactory:
    """Builds, fits and conditions GPyTorch models on one space (feature matrix built once)."""

    def __init__(self, table: FeatureTable, kernel: Kernel) -> None:
        self.kernel = kernel
        features = features_of(kernel)
        self.columns = {f: i for i, f in enumerate(features)}
        all_rows = np.arange(len(table.space), dtype=np.intp)
        self.x_all = torch.as_tensor(table.matrix(features, all_rows), dtype=DTYPE)

    def model(
        self, rows: Rows, y: FloatArray, extra: FloatArray
    ) -> tuple[SingleTaskGP, list[Slot], Slot | None, Slot]:
        built = build_kernel(self.kernel, self.columns)
        scale_slot: Slot | None = None
        covar: TorchKernel = built.kernel
        if not isinstance(self.kernel, Sum):
            scaled = ScaleKernel(built.kernel, outputscale_constraint=_interval("scale"))
            _log_prior(scaled, "log_scale_prior", "outputscale", *_SCALE_PRIOR)
            covar = scaled

            def get_s() -> torch.Tensor:
                s2: torch.Tensor = scaled.outputscale.detach()
                return s2.log().reshape(1)

            def put_s(theta: torch.Tensor) -> None:
                scaled.outputscale = theta.exp().reshape(())

            scale_slot = (get_s, put_s, 1)
        x = self.x_all[torch.as_tensor(rows)]
        t = torch.as_tensor(y, dtype=DTYPE).unsqueeze(-1)
        lik: GaussianLikelihood | FixedNoiseGaussianLikelihood
        if np.any(extra > 0):
            lik = FixedNoiseGaussianLikelihood(
                noise=torch.as_tensor(extra, dtype=DTYPE),
                learn_additional_noise=True,
                noise_constraint=_interval("noise"),
            )
            noise_module: Any = lik.second_noise_covar
        else:
            lik = GaussianLikelihood(noise_constraint=_interval("noise"))
            noise_module = lik.noise_covar
        noise_module.register_prior(
            "log_noise_prior",
            NormalPrior(torch.tensor(_NOISE_PRIOR[0], dtype=DTYPE), torch.tensor(_NOISE_PRIOR[1])),
            lambda m: m.noise.log(),
        )

        def get_v() -> torch.Tensor:
            v: torch.Tensor = noise_module.noise.detach().reshape(-1)[:1]
            return v.log()

        def put_v(theta: torch.Tensor) -> None:
            noise_module.noise = theta.exp().reshape(1)

        gp = SingleTaskGP(
            x,
            t,
            likelihood=lik,
            covar_module=covar,
            mean_module=ZeroMean(),
            outcome_transform=None,
            input_transform=None,
        ).to(DTYPE)
        return gp, built.slots, scale_slot, (get_v, put_v, 1)

    def fit(
        self,
        rows: Rows,
        y: FloatArray,
        extra: FloatArray,
        starts: list[Hypers],
        max_iter: int,
    ) -> Hypers:
        """MAP hyperparameters from each start (L-BFGS-B, at most ``max_iter``); the best."""
        best: tuple[float, Hypers] | None = None
        for start in starts:
            gp, slots, scale, noise = self.model(rows, y, extra)
            _write(start, slots, scale, noise)
            mll = ExactMarginalLogLikelihood(gp.likelihood, gp)
            mll.train()
            result = fit_gpytorch_mll_scipy(mll, options={"maxiter": max_iter})
            loss = float(result.fval) if result.fval is not None else math.inf
            found = _read(slots, scale, noise)
            if best is None or loss < best[0]:
                best = (loss, found)
        assert best is not None
        return best[1]

    def condition(self, hypers: Hypers, rows: Rows, y: FloatArray, extra: FloatArray) -> TorchGP:
        """The posterior at fixed ``hypers``."""
        gp, slots, scale, noise = self.model(rows, y, extra)
        _write(hypers, slots, scale, noise)
        gp.eval()
        return TorchGP(gp, self.x_all, hypers)

    def select(self, gp: TorchGP, cand: Rows, q: int, best: float, log_p: FloatArray) -> list[int]:
        """q rows by BoTorch's log EI + log P(runs), greedily with the kriging believer
        (``condition_on_observations`` at the posterior mean)."""
        chosen: list[int] = []
        model: Any = gp.model
        xc = self.x_all[torch.as_tensor(cand)].unsqueeze(-2)  # (m, 1, F)
        available = np.ones(len(cand), dtype=bool)
        for _ in range(min(q, len(cand))):
            with torch.no_grad():
                acq = LogExpectedImprovement(model, best_f=best, maximize=False)
                score = acq(xc).numpy() + log_p
                score[~available] = -np.inf
                j = int(np.argmax(score))
                chosen.append(int(cand[j]))
                available[j] = False
                if len(chosen) < q:
                    mean = model.posterior(xc[j]).mean
                    kwargs: dict[str, Any] = {}
                    if isinstance(model.likelihood, FixedNoiseGaussianLikelihood):
                        kwargs["noise"] = torch.zeros_like(mean)
                    model = model.condition_on_observations(xc[j], mean, **kwargs)
        return chosen


def _write(h: Hypers, slots: list[Slot], scale: Slot | None, noise: Slot) -> None:
    theta = torch.as_tensor(h.theta, dtype=DTYPE)
    i = 0
    for _, put, size in slots:
        put(theta[i : i + size])
        i += size
    if scale is not None:
        scale[1](torch.tensor([h.log_scale if h.log_scale is not None else 0.0], dtype=DTYPE))
    noise[1](torch.tensor([h.log_noise], dtype=DTYPE))


def _read(slots: list[Slot], scale: Slot | None, noise: Slot) -> Hypers:
    theta = torch.cat([get() for get, _, _ in slots]).numpy().astype(float)
    log_scale = float(scale[0]()[0]) if scale is not None else None
    return Hypers(theta, log_scale, float(noise[0]()[0]))


def loo_crps(gp: TorchGP) -> float:
    """Mean exact LOO-CRPS of ``gp`` (the quantity kernel discovery ranks by).

    The LOO predictive is computed as GPyTorch's ``LeaveOneOutPseudoLikelihood`` does it (one
    Cholesky factor of the training covariance), which that class does not return; the Gaussian
    CRPS is ``gp.loo``'s: neither library has a CRPS.
    """
    from kernelwright.tuning.gp.loo import gaussian_crps

    model = gp.model
    x, y = model.train_inputs[0], model.train_targets
    model.train()
    try:
        with torch.no_grad():
            output = model.likelihood(model(x), x)
            k_inv = torch.cholesky_inverse(torch.linalg.cholesky(output.covariance_matrix))
            var = 1.0 / k_inv.diagonal()
            mu = y - (k_inv @ (y - output.mean)) * var
    finally:
        model.eval()
    return float(gaussian_crps(y.numpy(), mu.numpy(), var.numpy()).mean())
