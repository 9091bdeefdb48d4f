import io
import subprocess
import sys

import pytest
from rich.console import Console

import kernelwright.agents as agents
from agent_doubles import Reply, ScriptedChatModel, ScriptedLLMServer, correct
from kernelwright.agents import (
    ConsoleReviewer,
    LLMProposer,
    ReviewGate,
    ReviewRequest,
    StaticSkills,
    make_llm_proposer,
)
from kernelwright.agents.skills import LibrarySkills, to_hint
from kernelwright.constraints import load_constraints
from kernelwright.errors import ConfigError
from kernelwright.records import Candidate


def test_public_surface_is_sorted_and_importable():
    assert agents.__all__ == sorted(agents.__all__)
    for name in agents.__all__:
        assert getattr(agents, name) is not None


def test_importing_the_agents_imports_no_sdk():
    code = (
        "import sys, kernelwright, kernelwright.agents;"
        "print(sorted(m for m in ('openai', 'anthropic', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_factory_with_files_seeds_and_an_injected_model(tmp_path, task, archive, replies):
    (tmp_path / "c.toml").write_text('forbidden_ops = ["torch.add"]\n[budget]\nllm_calls = 9\n')
    (tmp_path / "notes.md").write_text("Prefer one kernel; our GPUs are H100s.\n")
    seed = Candidate(
        "# template softmax\nclass ModelNew: ...\n",
        origin="template",
        design={"template": "elementwise"},
    )
    model = ScriptedChatModel([replies["plan"], replies["debugger_right"]])
    proposer = make_llm_proposer(
        spec="openai:ignored",
        base_url=None,
        task=task,
        constraints=str(tmp_path / "c.toml"),
        notes=str(tmp_path / "notes.md"),
        review=False,
        archive=archive,
        run_id="r",
        seed_candidates=[seed],
        chat_model=model,
        # the library's hints capture the task in a child process; test_agents_loop.py and
        # test_optimize_constraints.py plan with them
        skills=StaticSkills(),
    )
    assert isinstance(proposer, LLMProposer) and proposer.evaluate_fn is None
    assert proposer.constraints.llm_calls == 9
    proposer.ask(task, [], 1, 0)
    system, planner = model.requests[0][0].content, model.requests[0][1].content
    assert "torch.add" in system
    assert "our GPUs are H100s" in planner and "- elementwise" in planner
    assert "# template softmax" in model.requests[1][1].content


def test_factory_builds_a_real_provider_and_a_review_gate(task, archive):
    with ScriptedLLMServer([Reply("no code here")] * 2) as server:
        proposer = make_llm_proposer(
            spec="openai:served-model",
            base_url=server.url,
            task=task,
            constraints=None,
            notes="inline notes\nsecond line",
            review=True,
            archive=archive,
            run_id="r",
            environ={},
        )
        assert proposer.name == "llm:openai:served-model"
        assert isinstance(proposer.evaluate_fn, ReviewGate)
        assert isinstance(proposer.evaluate_fn.reviewer, ConsoleReviewer)
        assert proposer.notes == "inline notes\nsecond line"


def test_factory_reports_bad_configuration(task, archive, tmp_path):
    common = dict(task=task, notes=None, review=False, archive=archive, run_id="r")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        make_llm_proposer(
            spec="openai:gpt-4o", base_url=None, constraints=None, environ={}, **common
        )
    with pytest.raises(ConfigError, match="cannot read"):
        make_llm_proposer(
            spec="openai:m",
            base_url="http://127.0.0.1:9/v1",
            constraints=tmp_path / "missing.toml",
            environ={},
            **common,
        )


def test_console_reviewer_reads_an_answer_and_a_reason():
    screen = io.StringIO()
    reviewer = ConsoleReviewer(
        Console(file=screen, width=100), stream=io.StringIO("n\ntoo clever\n")
    )
    decision = reviewer.review(ReviewRequest("add", "class ModelNew: ...\n", correct(1.0), None))
    assert not decision.accepted and decision.reason == "too clever"
    assert "new best for add" in screen.getvalue()
    reviewer = ConsoleReviewer(Console(file=io.StringIO()), stream=io.StringIO("y\n"))
    assert reviewer.review(ReviewRequest("add", "x", correct(1.0), None)).accepted
    reviewer = ConsoleReviewer(Console(file=io.StringIO()), stream=io.StringIO(""))
    closed = reviewer.review(ReviewRequest("add", "x", correct(1.0), None))
    assert not closed.accepted and "input closed" in closed.reason


def test_library_skills_adapter(monkeypatch, task):
    import types

    assert LibrarySkills("kernelwright.no_such_package").hints(task) == ()
    fake = types.ModuleType("fake_skills")
    skill = types.SimpleNamespace(
        name="online-softmax",
        intent="one pass",
        pitfalls=["-inf rows"],
        conditions=["row fits in SMEM"],
    )
    fake.applicable_skills = lambda t: [skill]
    monkeypatch.setitem(sys.modules, "fake_skills", fake)
    (hint,) = LibrarySkills("fake_skills").hints(task)
    assert hint == to_hint(skill) and hint.id == "online-softmax"
    assert hint.pitfalls == ("-inf rows",) and hint.conditions_held == ("row fits in SMEM",)


def test_constraints_example_in_the_docs_loads(tmp_path):
    import re
    from pathlib import Path

    doc = (Path(__file__).parents[3] / "docs" / "agents.md").read_text()
    block = re.search(r"```toml\n(# constraints.toml.*?)```", doc, re.DOTALL).group(1)
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "online_softmax.py").write_text("# reference\n")
    path = tmp_path / "constraints.toml"
    path.write_text(block)
    constraints = load_constraints(path)
    assert constraints.forbidden_ops and constraints.signatures and constraints.candidates


def test_the_runs_precision_policy_reaches_every_prompt(task, archive, replies):
    from kernelwright.records import Precision

    model = ScriptedChatModel([replies["plan"], replies["debugger_right"]])
    proposer = make_llm_proposer(
        spec="openai:ignored",
        base_url=None,
        task=task,
        constraints=None,
        notes=None,
        review=False,
        archive=archive,
        run_id="r",
        precision=Precision.BF16,
        chat_model=model,
        skills=StaticSkills(),
    )
    proposer.ask(task, [], 1, 0)
    systems = [request[0].content for request in model.requests]
    assert len(systems) == 2
    assert all("Precision policy `bf16`" in s and "`fp32`" not in s for s in systems)


@pytest.mark.parametrize(("objective", "said"), [("energy", "ranked by energy per call"),
                                                 ("edp", "ranked by energy x time"),
                                                 ("time", None)])
def test_the_runs_objective_reaches_the_system_prompt(task, archive, replies, objective, said):
    from kernelwright.hardware.energy import Objective

    model = ScriptedChatModel([replies["plan"], replies["debugger_right"]])
    proposer = make_llm_proposer(
        spec="openai:ignored", base_url=None, task=task, constraints=None, notes=None,
        review=False, archive=archive, run_id="r", objective=Objective(objective),
        chat_model=model, skills=StaticSkills(),
    )
    proposer.ask(task, [], 1, 0)
    system = model.requests[0][0].content
    if said is None:
        assert "ranked by" not in system
    else:
        assert said in system
