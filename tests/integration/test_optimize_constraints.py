"""A constraints file binds ``optimize`` for every proposer (templates and LLM), end to end on the
CPU: real capture, the real harness under Triton's interpreter, small shapes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelwright.archive import Archive
from kernelwright.cli import app
from kernelwright.constraints import Constraints
from kernelwright.constraints.formulate import formulate
from kernelwright.errors import ConfigError
from kernelwright.evaluate import EvalOptions
from kernelwright.optimize import LLMConfig, OptimizeOptions, optimize_task, summarise
from kernelwright.records import Precision, Status
from kernelwright.search import Budget

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[1]
MSE = ROOT / "golden" / "tasks" / "mse_loss.py"
AGENTS = ROOT / "fixtures" / "agents"
QUICK = EvalOptions(device="cpu", trials=1, timing=False, baselines=False, timeout_s=120)


def clauses(trial) -> list[str]:  # type: ignore[no-untyped-def]
    return [v.check for v in trial.verdict.violations]


@pytest.fixture
def executor(shared_executor):  # type: ignore[no-untyped-def]
    """The candidates' processes of the runs judged with QUICK: the test process's shared
    executor, whose one fork server imports torch and Triton for all of them (a run's own
    executor starts one, seconds of CPU, even where nothing is evaluated), and a spare one run
    started serves the next."""
    return shared_executor


@pytest.mark.interpreter
def test_templates_breaking_a_clause_are_refused_and_the_next_design_is_evaluated(
    tmp_path, executor
):
    task = tmp_path / "mse_loss.py"
    shutil.copy(MSE, task)
    # The split reduction keeps float32 partial sums; forbid them. [budget] caps the run's 5 to 1.
    rules = Constraints(forbidden_ops=("torch.float32",), candidates=1)
    options = OptimizeOptions(evaluation=QUICK, constraints=rules, isolate_capture=False)
    with Archive(tmp_path / "a.sqlite") as archive:
        result = optimize_task(task, options, Budget(candidates=5), tmp_path / "out", archive,
                               executor=executor)
    refused, evaluated = result.trials
    assert refused.refused and refused.verdict.status is Status.REJECTED
    assert refused.candidate.design["skills"] == ["split-reduction"]
    assert clauses(refused) == ["constraint-forbidden-op"]
    assert "uses torch.float32 (forbidden)" in refused.verdict.message
    assert not evaluated.refused and evaluated.verdict.correct
    assert "torch.float32" not in evaluated.candidate.source
    assert result.best == evaluated and result.search is not None
    assert result.search.stopped == "budget"  # one evaluation: the file's cap, not the 5 asked
    summary = summarise(result)
    assert (summary["evaluated"], summary["refused"], summary["precision"]) == (1, 1, "fp32")
    assert (tmp_path / "out" / "best.py").read_text() == evaluated.candidate.source


@pytest.mark.parametrize(
    ("rules", "clause"),
    [
        (Constraints(backends=("cuda",)), "constraint-backend"),
        (Constraints(signatures=(("ModelNew.forward", ("self", "x")),)), "constraint-signature"),
    ],
)
def test_when_no_template_complies_nothing_is_evaluated(tmp_path, executor, rules, clause):
    options = OptimizeOptions(evaluation=QUICK, constraints=rules, isolate_capture=False)
    with Archive(":memory:") as archive:
        result = optimize_task(MSE, options, Budget(candidates=3), None, archive,
                               executor=executor)
    assert result.trials and result.best is None and result.search is not None
    assert all(t.refused and clauses(t) == [clause] for t in result.trials)
    assert result.search.evaluated == 0 and result.search.stopped == "proposer exhausted"


def test_a_precision_that_contradicts_the_constraints_stops_before_anything_runs(
    tmp_path, capture_in_process
):
    with pytest.raises(ConfigError, match="require precision = 'fp32'.*policy is tf32"):
        OptimizeOptions(
            evaluation=EvalOptions(precision=Precision.TF32),
            constraints=Constraints(precision=Precision.FP32),
        )
    rules = tmp_path / "c.toml"
    rules.write_text('precision = "tf32"\nbackends = ["cuda"]\n')
    archive = tmp_path / "a.sqlite"
    base = ["optimize", str(MSE), "--device", "cpu", "--trials", "1", "--archive", str(archive)]
    base += ["--constraints", str(rules)]
    conflict = CliRunner().invoke(app, [*base, "--precision", "fp32"])
    assert conflict.exit_code == 2 and "require precision = 'tf32'" in conflict.output
    assert not archive.exists()
    # Without --precision the file's policy is the run's; templates (Triton) all break backends.
    ran = CliRunner().invoke(app, [*base, "--json", str(tmp_path / "s.json"), "--quiet"])
    assert ran.exit_code == 1, ran.output  # no correct candidate
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["precision"] == "tf32" and summary["evaluated"] == 0 and summary["refused"] >= 1


CHEAT = """Simplest is to let PyTorch add.

```python
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return torch.add(x, y)
```
"""


@pytest.mark.interpreter
def test_the_llm_proposer_is_refused_by_optimize_and_repairs(tmp_path, monkeypatch):
    pytest.importorskip("openai")
    from agent_doubles import Reply, ScriptedLLMServer

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    replies = {p.stem: p.read_text() for p in (AGENTS / "replies").glob("*.md")}
    script = [Reply(replies["plan"]), Reply(CHEAT), Reply(replies["debugger_right"])]
    rules = Constraints(forbidden_ops=("torch.add",), precision=Precision.TF32)
    evaluation = EvalOptions(
        device="cpu", precision=Precision.TF32, trials=1, timing=False, baselines=False
    )
    with ScriptedLLMServer(script) as server, Archive(tmp_path / "a.sqlite") as archive:
        options = OptimizeOptions(
            evaluation=evaluation,
            constraints=rules,
            isolate_capture=False,
            llm=LLMConfig("openai:scripted", base_url=server.url, only=True),
        )
        result = optimize_task(AGENTS / "vector_add.py", options, Budget(1), None, archive)
        system = server.requests[-1].body["messages"][0]["content"]
    cheat, fixed = result.trials
    assert cheat.refused and clauses(cheat) == ["constraint-forbidden-op"]
    assert "torch.add" in cheat.verdict.message
    assert fixed.verdict.correct and fixed.candidate.parent == cheat.candidate_id
    assert result.best == fixed and result.search is not None
    assert result.search.stopped == "budget" and result.search.evaluated == 1
    assert "Precision policy `tf32`" in system and "torch.add" in system


def test_a_clause_formulated_from_words_refuses_the_candidates_that_break_it(tmp_path, executor):
    model = formulate("Tiles at most 512. Don't use atomics.")
    assert model.constraints is not None
    rules = model.constraints
    options = OptimizeOptions(evaluation=QUICK, constraints=rules, isolate_capture=False)
    with Archive(":memory:") as archive:
        result = optimize_task(MSE, options, Budget(candidates=3), None, archive,
                               executor=executor)
    assert result.trials and result.search is not None and result.search.evaluated == 0
    assert all(t.refused and clauses(t) == ["constraint-space"] for t in result.trials)
    messages = [t.verdict.message for t in result.trials]
    assert all("breaks `LOOP_BLOCK <= 512`" in m for m in messages), messages


def test_constraints_text_is_shown_before_the_run_and_enforced(tmp_path, capture_in_process):
    archive = tmp_path / "a.sqlite"
    base = ["optimize", str(MSE), "--device", "cpu", "--trials", "1", "--archive", str(archive)]
    conflict = CliRunner().invoke(app, [*base, "--constraints-text", "only CUDA. no CUDA."])
    assert conflict.exit_code == 2 and "leave no kernel language allowed" in conflict.output
    assert not archive.exists()
    vague = CliRunner().invoke(app, [*base, "--constraints-text", "no atomics. make it sing."])
    assert vague.exit_code == 2 and "not understood: 'make it sing'" in vague.output
    summary = tmp_path / "s.json"
    ran = CliRunner().invoke(
        app, [*base, "--constraints-text", "only CUDA", "--json", str(summary), "--quiet"]
    )
    assert ran.exit_code == 1, ran.output  # every template is Triton: refused, none correct
    assert "Formal constraint model" in ran.output and "only cuda" in ran.output
    found = json.loads(summary.read_text())
    assert found["evaluated"] == 0 and found["refused"] >= 1
