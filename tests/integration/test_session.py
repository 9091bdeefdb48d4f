"""One judge, several candidates: the reference is computed once, verdicts stay independent."""

import pytest

from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.harness import EvalSession
from kernelwright.records import Candidate, Status

pytestmark = pytest.mark.interpreter


def test_session_judges_each_candidate_in_its_own_process(fixtures):
    sols = fixtures / "solutions"
    options = EvalOptions(device="cpu", trials=2, timing=False, baselines=False)
    with EvalSession(fixtures / "tasks" / "softmax_rows.py", options) as session:
        good = session.evaluate(Candidate((sols / "softmax_rows__honest.py").read_text()))
        bad = session.evaluate(Candidate((sols / "softmax_rows__wrong.py").read_text()))
        hack = session.evaluate(Candidate((sols / "softmax_rows__hack_torch_only.py").read_text()))
        again = session.evaluate(Candidate((sols / "softmax_rows__multi_kernel.py").read_text()))
    assert good.status is Status.CORRECT
    assert bad.status is Status.INCORRECT
    assert hack.status is Status.REJECTED
    assert again.status is Status.CORRECT  # nothing a previous candidate did leaks into this one
    assert good.seed == again.seed  # same inputs for every candidate of a session
