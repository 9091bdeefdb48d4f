"""The LLM proposer driven by run_search, with a scripted model and a fake harness."""

import io
import json

import pytest

from agent_doubles import ScriptedChatModel, ScriptedJudge, correct, wrong
from kernelwright.agents import (
    AutoReviewer,
    LLMError,
    LLMProposer,
    SkillHint,
    StaticSkills,
    export_trajectories,
)
from kernelwright.constraints import Constraints
from kernelwright.evaluate.options import EvalOptions
from kernelwright.records import Status
from kernelwright.search import Budget, Suggester, run_search

WRONG = wrong(5.65)
OPTIONS = EvalOptions(device="cpu")


def make(task, archive, script, run_id="run-1", **kwargs):
    model = ScriptedChatModel(script)
    kwargs.setdefault("constraints", Constraints())
    kwargs.setdefault("skills", StaticSkills())
    proposer = LLMProposer(model=model, task=task, archive=archive, run_id=run_id, **kwargs)
    return proposer, model


def judge():
    return ScriptedJudge([("x - y", WRONG), ("BLOCK = 1024", correct(0.5))], correct(1.0))


def search(task, proposer, archive, n, run_id="run-1", evaluate_fn=None):
    return run_search(
        task,
        proposer,
        OPTIONS,
        archive,
        Budget(candidates=n),
        run_id,
        evaluate_fn=evaluate_fn or proposer.evaluate_fn or judge(),
    )


def test_propose_evaluate_feedback_repair_tune(task, archive, replies):
    script = [replies[k] for k in ("plan", "coder_wrong", "debugger_right", "tuner_faster")]
    proposer, model = make(task, archive, script)
    assert isinstance(proposer, Suggester)
    result = search(task, proposer, archive, 3)

    assert result.stopped == "budget"
    first, second, third = result.trials
    assert first.verdict.status is Status.INCORRECT
    assert second.verdict.correct and result.best == third
    assert (second.candidate.parent, third.candidate.parent) == (
        first.candidate_id,
        second.candidate_id,
    )
    assert [t.candidate.design["agent"] for t in result.trials] == ["coder", "debugger", "tuner"]
    assert third.candidate.params == {"BLOCK": 1024, "NUM_WARPS": 4}

    planner, coder, debugger, tuner = (r[-1].content for r in model.requests)
    assert "Stage 1 of 2" in planner and "return x + y" in planner
    assert "single kernel, nothing to fuse" in coder
    assert "max abs 5.65" in debugger and "x - y" in debugger  # mismatch statistics fed back
    assert f"#{first.candidate_id}" in debugger
    assert "Stage 2 of 2" in tuner and "speedup" in tuner and "UPPER_CASE" in tuner
    assert all(r[0].role == "system" and "ModelNew" in r[0].content for r in model.requests)


def test_every_prompt_and_reply_is_archived_with_its_candidate(task, archive, replies):
    script = [replies[k] for k in ("plan", "coder_wrong", "debugger_right")]
    proposer, _ = make(task, archive, script)
    result = search(task, proposer, archive, 2)
    messages = archive.messages("run-1")
    planner = [m for m in messages if m["meta"].get("agent") == "planner"]
    assert [m["role"] for m in planner] == ["system", "user", "assistant"]
    assert all(m["candidate_id"] is None for m in planner)
    for trial in result.trials:
        convo = [m for m in messages if m["candidate_id"] == trial.candidate_id]
        assert [m["role"] for m in convo] == ["system", "user", "assistant"]
        assert convo[-1]["meta"]["input_tokens"] == 100
        assert convo[-1]["meta"]["spec"] == "fake:scripted"
    assert proposer.ledger.calls == 3 and proposer.ledger.cost_usd is None

    out = io.StringIO()
    assert export_trajectories(archive, out, run_id="run-1") == 2
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[1]["parent_id"] == lines[0]["candidate_id"]
    assert lines[1]["messages"][-1]["role"] == "assistant"
    assert lines[0]["outcome"]["status"] == "incorrect" and lines[1]["outcome"]["correct"]
    assert lines[1]["agent"] == "debugger" and lines[1]["usage"]["output_tokens"] == 50

    raw = io.StringIO()
    archive.export_jsonl(raw, trajectories=True)
    exported = [json.loads(line) for line in raw.getvalue().splitlines()]
    assert [len(e["messages"]) for e in exported] == [3, 3]


def test_a_reply_without_code_becomes_feedback(task, archive, replies):
    script = [replies["plan"], "I would tile it, roughly.", replies["debugger_right"]]
    proposer, model = make(task, archive, script)
    result = search(task, proposer, archive, 1)
    assert len(result.trials) == 1 and result.best is not None
    feedback = model.requests[2][-1].content
    assert "no usable code" in feedback and "class ModelNew" in feedback
    convo = archive.messages("run-1")[-5:]
    assert [m["role"] for m in convo] == ["system", "user", "assistant", "user", "assistant"]


def test_a_duplicate_gets_feedback_instead_of_an_evaluation(task, archive, replies):
    script = [
        replies["plan"],
        replies["debugger_right"],
        replies["debugger_right"],
        replies["tuner_faster"],
    ]
    proposer, model = make(task, archive, script)
    result = search(task, proposer, archive, 2)
    assert result.pruned == 0 and len(result.trials) == 2
    assert "same as candidate" in model.requests[3][-1].content


def test_no_usable_code_stops_cleanly(task, archive, replies):
    script = [replies["plan"], "no", "still no", "sorry"]
    proposer, _ = make(task, archive, script)
    result = search(task, proposer, archive, 3)
    assert result.trials == [] and result.stopped == proposer.stop_reason
    assert "no new usable code in 3 replies" in proposer.stop_reason
    assert archive.messages("run-1")[-1]["role"] == "stop"


def test_provider_failure_is_a_stopped_proposer_not_a_traceback(task, archive, replies):
    error = LLMError("http://127.0.0.1:1/v1 answered HTTP 503 (after 4 attempt(s))", retryable=True)
    proposer, _ = make(task, archive, [replies["plan"], replies["coder_wrong"], error])
    result = search(task, proposer, archive, 5)
    assert len(result.trials) == 1 and result.stopped == proposer.stop_reason
    assert "HTTP 503" in proposer.stop_reason
    assert proposer.ask(task, result.trials, 1, 0) == []


def test_a_resumed_run_reads_plan_and_spend_back(task, archive, replies):
    proposer, _ = make(task, archive, [replies["plan"], replies["coder_wrong"]])
    search(task, proposer, archive, 1)
    resumed, model = make(task, archive, [replies["debugger_right"]])
    result = search(task, resumed, archive, 2)
    assert len(result.trials) == 2 and result.best is not None
    assert "failed in the harness" in model.requests[0][-1].content  # no second planner call
    assert resumed.ledger.calls == 3


def test_llm_call_budget_from_constraints(task, archive, replies):
    script = [replies["plan"], replies["coder_wrong"], replies["debugger_right"]]
    proposer, model = make(task, archive, script, constraints=Constraints(llm_calls=2))
    result = search(task, proposer, archive, 5)
    assert len(result.trials) == 1 and len(model.requests) == 2
    assert "call budget (2 calls)" in proposer.stop_reason


def test_repairs_are_bounded_then_a_fresh_coder_starts(task, archive, replies):
    wrong_file = replies["coder_wrong"]
    variants = [wrong_file.replace("BLOCK = 256", f"BLOCK = {b}") for b in (256, 128, 64)]
    script = [replies["plan"], *variants, replies["debugger_right"]]
    proposer, model = make(task, archive, script, max_repairs=2)
    result = search(task, proposer, archive, 4)
    roles = [t.candidate.design["agent"] for t in result.trials]
    assert roles == ["coder", "debugger", "debugger", "coder"]
    assert result.trials[-1].candidate.parent is None
    assert "Earlier attempts failed" in model.requests[-1][-1].content


def test_review_rejection_reaches_the_archive_and_the_next_prompt(task, archive, replies):
    script = [replies["plan"], replies["debugger_right"], replies["tuner_faster"]]
    reviewer = AutoReviewer(accept=False, reason="keep BLOCK at 128 for our register budget")
    proposer, model = make(task, archive, script, reviewer=reviewer)
    proposer.evaluate_fn.inner = judge()
    result = search(task, proposer, archive, 2)
    first = result.trials[0]
    assert first.verdict.status is Status.REJECTED and not first.verdict.correct
    assert first.verdict.violations[-1].check == "human-review"
    assert result.best is None and archive.best(task.sha256, "run-1") is None
    assert "register budget" in model.requests[2][-1].content
    reviews = [m for m in archive.messages("run-1") if m["role"] == "review"]
    assert len(reviews) == 2 and reviews[0]["meta"]["accepted"] is False


def test_review_acceptance_keeps_the_verdict(task, archive, replies):
    script = [replies["plan"], replies["debugger_right"]]
    proposer, _ = make(task, archive, script, reviewer=AutoReviewer())
    proposer.evaluate_fn.inner = judge()
    result = search(task, proposer, archive, 1)
    assert result.best is not None and result.best.verdict.correct


def test_skills_reach_planner_and_the_chosen_ones_reach_the_coder(task, archive, replies):
    hints = (
        SkillHint("vectorised-io", "wide loads", ("keep BLOCK a power of two",), ("n >= 1",)),
        SkillHint("split-k", "split the reduction", ("atomics are non-deterministic",)),
    )
    plan = replies["plan"] + "\nApply vectorised-io."
    proposer, model = make(
        task, archive, [plan, replies["debugger_right"]], skills=StaticSkills(hints)
    )
    search(task, proposer, archive, 1)
    planner, coder = (r[-1].content for r in model.requests)
    assert "`vectorised-io`: wide loads" in planner and "holds because: n >= 1" in planner
    assert "split-k" in planner
    assert "keep BLOCK a power of two" in coder and "atomics" not in coder


def test_ask_respects_n(task, archive, replies):
    script = [replies["plan"], replies["coder_wrong"], replies["debugger_right"]]
    proposer, _ = make(task, archive, script)
    proposals = proposer.ask(task, [], 2, 0)
    assert len(proposals) == 2
    assert proposals[0].candidate.source != proposals[1].candidate.source


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_system_prompt_teaches_format_rules_and_policy(task, archive, replies, precision):
    from kernelwright.records import Precision

    constraints = Constraints(forbidden_ops=("torch.matmul",), backends=("triton",))
    proposer, model = make(
        task, archive, [replies["plan"]], constraints=constraints, precision=Precision(precision)
    )
    proposer.ask(task, [], 1, 0)
    system = model.requests[0][0].content
    for rule in ("class ModelNew(nn.Module)", "try/except", "`Model`", "TRITON_INTERPRET=1"):
        assert rule in system
    assert f"Precision policy `{precision}`" in system and "torch.matmul" in system
    assert "load_inline" not in system
