"""End to end with the real harness under Triton's interpreter:

scripted OpenAI-compatible server -> openai SDK -> LLMProposer -> run_search -> evaluate
propose (breaks a constraint) -> refused before it is evaluated -> repair (wrong sum) ->
incorrect, mismatch statistics fed back -> repair -> verified correct best; stops at the budget
of two evaluations (the refusal costs none).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_doubles import Fail, Reply, ScriptedLLMServer, needs_sdks
from kernelwright.agents import LLMSettings, RetryPolicy, make_llm_proposer
from kernelwright.archive import Archive
from kernelwright.constraints import Constraints
from kernelwright.evaluate.options import EvalOptions
from kernelwright.records import Status
from kernelwright.search import Budget, run_search
from kernelwright.task import load_task

pytestmark = needs_sdks("openai")
pytest.importorskip("triton")

AGENTS = Path(__file__).parents[1] / "fixtures" / "agents"
REPLIES = {p.stem: p.read_text() for p in (AGENTS / "replies").glob("*.md")}
CHEAT = """Simplest is to let PyTorch add.

```python
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return torch.add(x, y)
```
"""


@pytest.fixture(autouse=True)
def no_llm_environment(monkeypatch):
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.mark.interpreter
# slow: test_optimize_constraints.py runs the scripted LLM through the harness (a refused
# proposal, its repair, the verified best), test_agents_loop.py the feedback of a mismatch and
# the retries, tests/unit/agents/test_agent_context.py the guard's refusal in the prompt
@pytest.mark.slow
def test_propose_evaluate_feedback_repair_verified_best(tmp_path):
    task = load_task(AGENTS / "vector_add.py")
    constraints = Constraints(backends=("triton",), forbidden_ops=("torch.add",))
    options = constraints.apply(
        EvalOptions(device="cpu", trials=1, timing=False, baselines=False, timeout_s=120)
    )
    script = [
        Reply(REPLIES["plan"]),
        Reply(CHEAT),
        Fail(429),
        Reply(REPLIES["coder_wrong"]),
        Reply(REPLIES["debugger_right"]),
        Reply(REPLIES["tuner_faster"]),  # left over: the budget ends the run first
    ]
    settings = LLMSettings(timeout_s=10, retry=RetryPolicy(attempts=2, initial_s=0.01))
    with ScriptedLLMServer(script) as server, Archive(tmp_path / "archive.sqlite") as archive:
        proposer = make_llm_proposer(
            spec="openai:scripted",
            base_url=server.url,
            task=task,
            constraints=constraints,
            notes=None,
            review=False,
            archive=archive,
            run_id="e2e",
            settings=settings,
            environ={},
        )
        result = run_search(
            task,
            proposer,
            options,
            archive,
            constraints.limit(Budget(2)),  # the refused cheat costs no evaluation
            "e2e",
            evaluate_fn=proposer.evaluate_fn,
        )
        best = archive.best(task.sha256, "e2e")

    cheat, wrong, fixed = result.trials
    assert cheat.refused and cheat.verdict.status is Status.REJECTED
    assert [v.check for v in cheat.verdict.violations] == ["constraint-forbidden-op"]
    assert wrong.verdict.status is Status.INCORRECT and wrong.verdict.max_abs_err > 0.1
    assert fixed.verdict.status is Status.CORRECT and fixed.verdict.correct
    assert result.stopped == "budget" and result.best == fixed
    assert best is not None and best.candidate_id == fixed.candidate_id
    assert (wrong.candidate.parent, fixed.candidate.parent) == (
        cheat.candidate_id,
        wrong.candidate_id,
    )

    prompts = [
        r.body["messages"][-1]["content"] for r in server.requests if isinstance(r.body, dict)
    ]
    assert "guard check `constraint-forbidden-op`" in prompts[3]
    assert "status: incorrect" in prompts[4] and "max abs" in prompts[4]
    assert len(server.script) == 1
