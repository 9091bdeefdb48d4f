"""optimize with an LLM: templates, the LLM and the constant tuner in one search, each building on
the others' candidates (the harness is scripted here; the LLM answers over real HTTP)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kernelwright.design.plan as plan_module
import kernelwright.skills as skills_module
from agent_doubles import Reply, ScriptedJudge, ScriptedLLMServer, correct, needs_sdks
from kernelwright.archive import Archive
from kernelwright.evaluate.options import EvalOptions
from kernelwright.optimize import LLMConfig, OptimizeOptions, optimize_task, summarise
from kernelwright.search.controller import Budget

pytestmark = needs_sdks("openai")

AGENTS = Path(__file__).parents[1] / "fixtures" / "agents"
REPLIES = {p.stem: p.read_text() for p in (AGENTS / "replies").glob("*.md")}


@pytest.fixture(autouse=True)
def no_llm_environment(monkeypatch):  # type: ignore[no-untyped-def]
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def test_templates_llm_and_tuner_share_one_search(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # the LLM's file (BLOCK = 256) is correct; the tuner's child of it with BLOCK doubled is
    # twice as fast, so it becomes the run's best, with the LLM's candidate as its parent
    judge = ScriptedJudge([("\nBLOCK = 512\n", correct(0.5))], default=correct(1.0))
    plans: list[object] = []
    plan_task = plan_module.plan_task
    monkeypatch.setattr(plan_module, "plan_task",
                        lambda *a, **k: plans.append(plan_task(*a, **k)) or plans[-1])
    monkeypatch.setattr(skills_module, "skill_hints", lambda *a, **k: pytest.fail(
        "the skills shown to the LLM are the run's plan's, not a second plan's"))
    script = [Reply(REPLIES["plan"]), Reply(REPLIES["debugger_right"])]
    with ScriptedLLMServer(script) as server, Archive(tmp_path / "a.sqlite") as archive:
        options = OptimizeOptions(
            evaluation=EvalOptions(device="cpu", trials=1),
            isolate_capture=False,
            llm=LLMConfig("openai:scripted", base_url=server.url),
        )
        result = optimize_task(AGENTS / "vector_add.py", options, Budget(candidates=4),
                               tmp_path / "out", archive, evaluate_fn=judge)
    trials = result.trials
    assert [t.candidate.origin for t in trials] == ["template", "llm", "tuner", "template"]
    llm, tuned = trials[1], trials[2]
    assert tuned.candidate.parent == llm.candidate_id
    assert "\nBLOCK = 512\n" in tuned.candidate.source
    assert result.best is tuned
    assert result.search is not None and result.search.evaluated == 4
    # the LLM saw the skills of the run's own plan (its first request, for the template it
    # tunes: the pitfalls of that candidate's skill); the task was planned once
    (plan,) = plans
    prompt = server.requests[0].body["messages"][-1]["content"]
    skill = plan.library.get(plan.designs[0].choices[0].skill)  # type: ignore[attr-defined]
    assert skill.pitfalls and all(p in prompt for p in skill.pitfalls)
    tree = {node["id"]: node["parent"] for node in summarise(result)["tree"]}
    assert tree[tuned.candidate_id] == llm.candidate_id
    assert '"proposer": "templates+llm:openai:scripted+tuner"' in _run_config(tmp_path / "a.sqlite",
                                                                        result.run_id)


def _run_config(path: Path, run_id: str) -> str:
    import sqlite3

    with sqlite3.connect(path) as db:
        row = db.execute("select config from runs where id = ?", (run_id,)).fetchone()
    return str(row[0]) if row else ""
