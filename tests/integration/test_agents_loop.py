"""The LLM loop over real HTTP: run_search -> LLMProposer -> official SDK -> scripted server.

The harness is faked here (ScriptedJudge); test_agents_harness.py runs the real one.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agent_doubles import (
    Fail,
    Garbled,
    Reply,
    ScriptedJudge,
    ScriptedLLMServer,
    Stall,
    correct,
    needs_sdks,
    wrong,
)
from kernelwright.agents import (
    LibrarySkills,
    LLMSettings,
    RetryPolicy,
    StaticSkills,
    make_llm_proposer,
)
from kernelwright.archive import Archive
from kernelwright.evaluate.options import EvalOptions
from kernelwright.search import Budget, run_search
from kernelwright.task import load_task

pytestmark = needs_sdks("openai", "anthropic")

AGENTS = Path(__file__).parents[1] / "fixtures" / "agents"
REPLIES = {p.stem: p.read_text() for p in (AGENTS / "replies").glob("*.md")}
SETTINGS = LLMSettings(timeout_s=0.5, retry=RetryPolicy(attempts=3, initial_s=0.01, max_s=0.05))


@pytest.fixture(autouse=True)
def no_llm_environment(monkeypatch):
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(scope="module")
def skills():
    """The skill library's hints for the task, found once: every test here plans the same task,
    and finding them captures its graph in a child process."""
    return StaticSkills(tuple(LibrarySkills().hints(load_task(AGENTS / "vector_add.py"))))


def run(server, spec, budget, archive, skills, environ=None):
    task = load_task(AGENTS / "vector_add.py")
    proposer = make_llm_proposer(
        spec=spec,
        base_url=server.url,
        task=task,
        constraints=None,
        notes=None,
        review=False,
        archive=archive,
        run_id="http",
        settings=SETTINGS,
        skills=skills,
        environ=environ or {},
    )
    judge = ScriptedJudge([("x - y", wrong(5.65))], default=correct(1.0))
    result = run_search(
        task,
        proposer,
        EvalOptions(device="cpu"),
        archive,
        Budget(candidates=budget),
        "http",
        evaluate_fn=judge,
    )
    return proposer, result


def test_openai_loop_repairs_through_provider_errors(skills):
    script = [
        Fail(429),
        Reply(REPLIES["plan"]),  # planner
        Fail(500),
        Garbled(),
        Reply(REPLIES["coder_wrong"]),  # coder
        Stall(1.0, Reply("too late")),
        Reply(REPLIES["debugger_right"]),  # debugger
        Reply(REPLIES["tuner_faster"]),  # never asked
    ]
    secret = "sk-loop-secret"
    with ScriptedLLMServer(script) as server, Archive(":memory:") as archive:
        proposer, result = run(
            server, "openai:served", 2, archive, skills, {"OPENAI_API_KEY": secret}
        )
        messages = archive.messages("http")
    assert result.stopped == "budget" and proposer.stop_reason is None
    wrong_trial, fixed = result.trials
    assert result.best == fixed and fixed.candidate.parent == wrong_trial.candidate_id
    bodies = [r.body for r in server.requests if isinstance(r.body, dict)]
    assert len(server.requests) == 7 and len(server.script) == 1
    debugger_prompt = bodies[-1]["messages"][-1]["content"]
    assert "max abs 5.65" in debugger_prompt and "x - y" in debugger_prompt
    assert all(r.carries(secret) for r in server.requests)
    replies = [m for m in messages if m["role"] == "assistant"]
    assert [m["meta"]["attempts"] for m in replies] == [2, 3, 2]
    assert proposer.ledger.calls == 3 and proposer.ledger.input_tokens == 360


def test_openai_loop_stops_cleanly_when_the_provider_keeps_failing(skills):
    script = [Reply(REPLIES["plan"]), Reply(REPLIES["coder_wrong"]), *[Fail(503)] * 5]
    with ScriptedLLMServer(script) as server, Archive(":memory:") as archive:
        proposer, result = run(server, "openai:served", 5, archive, skills)
        stop = archive.messages("http")[-1]
    assert len(result.trials) == 1 and result.stopped == proposer.stop_reason
    assert "HTTP 503" in proposer.stop_reason and "after 3 attempt" in proposer.stop_reason
    assert stop["role"] == "stop" and stop["meta"]["calls"] == 2
    assert len(server.requests) == 5


def test_anthropic_loop_with_feedback_turn(skills):
    script = [
        Reply(REPLIES["plan"]),
        Fail(529),
        Reply("I would write one masked kernel."),  # no code: feedback turn
        Reply(REPLIES["debugger_right"]),
    ]
    secret = "sk-ant-loop"
    with ScriptedLLMServer(script, api="anthropic") as server, Archive(":memory:") as archive:
        _, result = run(
            server, "anthropic:claude-test", 1, archive, skills, {"ANTHROPIC_API_KEY": secret}
        )
        buffer = io.StringIO()
        archive.export_jsonl(buffer, trajectories=True)
    assert result.best is not None and result.stopped == "budget"
    last = server.requests[-1].body
    assert [m["role"] for m in last["messages"]] == ["user", "assistant", "user"]
    assert "no usable code" in last["messages"][-1]["content"]
    assert "ModelNew" in last["system"]
    assert all(r.carries(secret) for r in server.requests)
    (line,) = [json.loads(x) for x in buffer.getvalue().splitlines()]
    assert [m["role"] for m in line["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
