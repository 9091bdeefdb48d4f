"""What the parent asks the judge to prepare. Picklable, and never holding a tensor."""

from __future__ import annotations

from dataclasses import dataclass

from kernelwright.records import Precision, Tolerance


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """Prepare the reference (see :mod:`kernelwright.evaluate.judge_worker`).

    ``widen_atol``: under the fp32 policy, measure the reference's own error against float64
    and widen each output's atol to it, and under every policy arbitrate elements outside the
    tolerance by the float64 answer (see :mod:`kernelwright.evaluate.correctness`); off when
    the user set ``--atol``, which then applies exactly. ``run_dir`` is removed by the judge if
    the parent dies (it holds the candidates' scratch folders). ``secret`` keys every seed of
    weights and inputs (see :func:`~kernelwright.evaluate.inputs.derive_seed`); it never leaves
    the trusted side. ``shape_ranges``: see :class:`~kernelwright.evaluate.options.EvalOptions`.
    ``energy``: the run ranks by energy, so timing takes more batches (the energy counter moves
    in steps of about 100 ms, and its error shrinks with the windows it is summed over).
    """

    task_path: str
    size: str
    device: str
    precision: Precision
    tolerance: Tolerance
    seed: int
    trials: int
    distributions: bool
    cache_dir: str | None
    task_sha256: str = ""
    widen_atol: bool = True
    run_dir: str = ""
    secret: str = ""
    shape_ranges: tuple[tuple[str, int, int], ...] = ()
    energy: bool = False
