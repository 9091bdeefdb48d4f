"""``bo-botorch``: the ``bo`` loop with its GP carried by GPyTorch and BoTorch (a comparison).

Same kernel expression (the GPU-aware kernel), priors, bounds, fit schedule and warm starts,
targets, initial design and kriging-believer batches as ``bo``; the kernels, marginal
likelihood, L-BFGS-B fit (torch autograd), posterior, log EI and fantasy conditioning are the
libraries'. Feasibility stays the least-squares classifier of ``gp.acquisition`` (neither
library has it). docs/tuning.md compares its replay scores and time per suggestion with ``bo``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from kernelwright.tuning.gp.acquisition import feasibility
from kernelwright.tuning.gp.features import FeatureTable
from kernelwright.tuning.gp.kernels import Kernel
from kernelwright.tuning.gp.model import Hypers, condition, default_hypers
from kernelwright.tuning.strategies.bayesopt import BayesOpt, BOSettings

FloatArray = npt.NDArray[np.float64]


@dataclass
class BayesOptBoTorch(BayesOpt):
    """See the module docstring."""

    name: str = "bo-botorch"
    settings: BOSettings = field(default_factory=BOSettings)
    _factories: dict[object, Any] = field(default_factory=dict, repr=False)

    def _factory(self, kernel: Kernel, table: FeatureTable) -> Any:
        from kernelwright.tuning.gp.gpytorch_model import TorchGPFactory

        key = (table.space.fingerprint, str(kernel))
        found = self._factories.get(key)
        if found is None:
            found = self._factories[key] = TorchGPFactory(table, kernel)
        return found

    def _fit(
        self,
        kernel: Kernel,
        table: FeatureTable,
        data: tuple[npt.NDArray[np.intp], FloatArray, FloatArray],
        starts: tuple[Hypers, ...],
        from_prior: bool,
    ) -> Hypers:
        rows, y, extra = data
        first = [default_hypers(kernel)] if from_prior or not starts else []
        hypers: Hypers = self._factory(kernel, table).fit(
            rows, y, extra, [*first, *starts], self.settings.max_iter
        )
        return hypers

    def _condition(
        self,
        kernel: Kernel,
        hypers: Hypers,
        table: FeatureTable,
        rows: npt.NDArray[np.intp],
        y: FloatArray,
        extra: FloatArray,
    ) -> Any:
        self._last = (kernel, hypers, table, rows, y, extra)
        return self._factory(kernel, table).condition(hypers, rows, y, extra)

    def _select(
        self,
        gp: Any,
        cand: npt.NDArray[np.intp],
        q: int,
        best: float,
        evaluated: npt.NDArray[np.intp],
        ok: npt.NDArray[np.bool_],
    ) -> list[int]:
        kernel, hypers, table, rows, y, extra = self._last
        p: FloatArray = np.ones(len(cand))
        if self.settings.feasibility and not ok.all():
            p = feasibility(condition(kernel, hypers, table, rows, y, extra), evaluated, ok, cand)
        chosen: list[int] = self._factory(kernel, table).select(gp, cand, q, best, np.log(p))
        return chosen


def make(**options: Any) -> BayesOptBoTorch:
    """Registry factory (``BOSettings`` options, as for ``bo``)."""
    return BayesOptBoTorch(settings=BOSettings(**options))
