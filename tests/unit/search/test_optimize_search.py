"""``optimize_task`` in each search mode with a synthetic judge: the summary's tree and
``pruned_equivalent``, the report's pruning line, run ids per mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from doubles.judges import synthetic_judge
from typer.testing import CliRunner

from kernelwright.archive import Archive
from kernelwright.cli import app
from kernelwright.errors import ConfigError
from kernelwright.evaluate import EvalOptions
from kernelwright.optimize import LLMConfig, OptimizeOptions, optimize_task, run_id_for, summarise
from kernelwright.records import Candidate
from kernelwright.search import Budget


def options(search: str) -> OptimizeOptions:
    return OptimizeOptions(EvalOptions(device="cpu"), isolate_capture=False, search=search)


@pytest.mark.parametrize("search", ["mcts", "evolution"])
def test_the_summary_holds_the_tree_and_the_report_the_pruning(
    softmax_plan, tmp_path: Path, search: str
) -> None:  # type: ignore[no-untyped-def]
    calls: list[Candidate] = []
    result = optimize_task(
        softmax_plan.task,
        options(search),
        Budget(candidates=5),
        tmp_path / "out",
        Archive(tmp_path / "a.sqlite"),
        evaluate_fn=synthetic_judge(lambda d, p: 1.0, calls),
    )
    summary = summarise(result)
    assert summary["evaluated"] == len(calls) == 5 and summary["pruned_equivalent"] == 0
    tree = summary["tree"]
    ids = [n["id"] for n in tree]
    assert len(tree) == 5 and tree[0]["parent"] is None
    assert any(n["parent"] in ids for n in tree)  # something was derived from a candidate
    first = {"mcts": "mcts: structure 1/", "evolution": "evolution: seed 1/"}[search]
    assert first in tree[0]["note"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "equivalence pruning saved 0 evaluation(s)" in report and "## Search tree" in report
    assert "![search tree](tree.png)" in report  # the tree drawn beside the report
    assert (tmp_path / "out" / "tree.png").read_bytes().startswith(b"\x89PNG")
    # the archive gives the same tree back
    args = ["archive", "tree", result.run_id, "--archive", str(tmp_path / "a.sqlite")]
    exported = CliRunner().invoke(app, args)
    assert exported.exit_code == 0, exported.output
    edges = [(n["id"], n["parent"]) for n in json.loads(exported.stdout)]
    assert edges == [(n["id"], n["parent"]) for n in tree]


def test_each_mode_has_its_own_run_and_staged_keeps_its_id(softmax_plan) -> None:  # type: ignore[no-untyped-def]
    task = softmax_plan.task
    ids = {m: run_id_for(task, options(m), "cpu", "small") for m in ("staged", "mcts", "evolution")}
    assert len(set(ids.values())) == 3
    assert ids["staged"] == run_id_for(
        task, OptimizeOptions(EvalOptions(device="cpu")), "cpu", "small"
    )
    with pytest.raises(ConfigError, match="--search 'beam'"):
        options("beam")
    with pytest.raises(ConfigError, match="with --llm-only the LLM proposes alone"):
        OptimizeOptions(search="mcts", llm=LLMConfig("openai:gpt-4o", only=True))
    joint = OptimizeOptions(EvalOptions(device="cpu"), search="mcts", llm=LLMConfig("openai:m"))
    alone = OptimizeOptions(EvalOptions(device="cpu"), llm=LLMConfig("openai:m", only=True))
    assert len({ids["mcts"], run_id_for(task, joint, "cpu", "small"),
                run_id_for(task, alone, "cpu", "small")}) == 3


def test_staged_tuning_reuses_the_verdict_of_a_block_past_the_shape(
    pointwise_plan, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    calls: list[Candidate] = []
    result = optimize_task(
        pointwise_plan.task,
        options("staged"),
        Budget(candidates=6),
        tmp_path / "out",
        Archive(tmp_path / "a.sqlite"),
        evaluate_fn=synthetic_judge(lambda d, p: 1.0, calls),
    )
    summary = summarise(result)
    saved = summary["pruned_equivalent"]
    assert saved >= 1 and summary["evaluated"] == len(calls) == 6
    assert len(summary["tree"]) == 6 + saved  # the reused ones are candidates of the run too
    # six different kernels: BLOCK past the 1024 the 800 elements pad to is not one more
    assert len({(c.params["g0.WARPS"], min(c.params["g0.BLOCK"], 1024)) for c in calls}) == 6
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"equivalence pruning saved {saved} evaluation(s)" in report


def test_a_changed_harness_starts_a_new_run(softmax_plan, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A resumed run reuses archived verdicts: only while the code that judged them is the same."""
    import kernelwright.optimize as optimize_module

    task = softmax_plan.task
    before = run_id_for(task, options("staged"), "cpu", "small")
    monkeypatch.setattr(optimize_module, "harness_fingerprint", lambda: "another-judge")
    assert run_id_for(task, options("staged"), "cpu", "small") != before


def test_a_changed_generator_starts_a_new_run(softmax_plan, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A resumed run skips the designs it tried: only while they still render what was judged."""
    import kernelwright.design.fingerprint as generator

    task = softmax_plan.task
    before = run_id_for(task, options("staged"), "cpu", "small")
    monkeypatch.setattr(generator, "generator_fingerprint", lambda: "another-generator")
    assert run_id_for(task, options("staged"), "cpu", "small") != before


def test_a_run_named_to_resume_must_be_one_of_this_tasks(softmax_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    archive = Archive(tmp_path / "a.sqlite")
    calls: list[Candidate] = []
    judge = synthetic_judge(lambda d, p: 1.0, calls)
    with pytest.raises(ConfigError, match="no such run"):
        optimize_task(softmax_plan.task, dataclasses.replace(options("staged"), resume="typo"),
                      Budget(candidates=1), None, archive, evaluate_fn=judge)
    archive.start_run("other", "search", "0" * 64, {})
    with pytest.raises(ConfigError, match="another task"):
        optimize_task(softmax_plan.task, dataclasses.replace(options("staged"), resume="other"),
                      Budget(candidates=1), None, archive, evaluate_fn=judge)
    assert calls == []  # refused before anything was judged
    first = optimize_task(softmax_plan.task, options("staged"), Budget(candidates=1), None,
                          archive, evaluate_fn=judge)
    again = optimize_task(softmax_plan.task,
                          dataclasses.replace(options("staged"), resume=first.run_id),
                          Budget(candidates=2), None, archive, evaluate_fn=judge)
    assert again.run_id == first.run_id and len(calls) == 2  # the first verdict was kept


SCALAR_OUTPUT = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x.sum().item()


def get_inputs():
    return [torch.randn(3, 4)]


def get_init_inputs():
    return []
"""


def test_designs_that_cannot_be_rendered_are_said_with_why(tmp_path: Path) -> None:
    from kernelwright.task import load_task

    path = tmp_path / "scalar.py"
    path.write_text(SCALAR_OUTPUT)
    calls: list[Candidate] = []
    result = optimize_task(load_task(path, size="small"), options("staged"),
                           Budget(candidates=2), tmp_path / "out", Archive(tmp_path / "a.sqlite"),
                           evaluate_fn=synthetic_judge(lambda d, p: 1.0, calls))
    assert calls == [] and result.plan.designs
    assert result.unrendered and all("_local_scalar_dense" in why for _, why in result.unrendered)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "no design could be rendered (below)" in report and "## Designs not rendered" in report
