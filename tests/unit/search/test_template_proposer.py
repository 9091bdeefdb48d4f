"""Stage 1 then stage 2 through the search seam, with a fake judge (no harness): ranking,
tuning around the best structure, no repeats, resume from the archive."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from doubles.judges import accuracy_judge

from kernelwright.archive import Archive
from kernelwright.design.choices import design_from_json
from kernelwright.design.plan import plan_task
from kernelwright.errors import ConfigError
from kernelwright.evaluate import EvalOptions
from kernelwright.optimize import tuning_strategy
from kernelwright.records import Candidate, Status, Timing, TimingStats, Verdict
from kernelwright.search import Budget, run_search
from kernelwright.search.templates import TemplateProposer
from kernelwright.search.tunable import DesignSpace, params_key
from kernelwright.task import load_task
from kernelwright.tuning.strategies import get_strategy
from kernelwright.tuning.strategies.staged import LOCAL_FIRST

TASK = """
import torch
import torch.nn as nn
rows = 64
cols = 2000
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.softmax(x, dim=-1)
def get_inputs():
    return [torch.randn(rows, cols)]
def get_init_inputs():
    return []
"""


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("p") / "softmax.py"
    path.write_text(textwrap.dedent(TASK))
    return plan_task(load_task(path, "small"), "cuda", "small", isolate=False)


def fake_judge(task, candidate: Candidate, options, executor=None) -> Verdict:  # type: ignore[no-untyped-def]
    """Faster with more rows per program and the one-pass skill; deterministic."""
    params = candidate.params
    ms = 1.0 if "row-onepass" in candidate.design["skills"] else 2.0
    ms /= 1 + 0.01 * sum(int(v) for k, v in params.items() if k.endswith(("ROWS", "LOOP_ROWS")))
    stats = TimingStats(ms, ms, ms, 0.0, 5)
    return Verdict(Status.CORRECT, True, timing=Timing(candidate=stats, speedup_vs_eager=3.0 / ms))


def test_designs_rank_one_pass_first_with_reasons(plan) -> None:  # type: ignore[no-untyped-def]
    first = plan.designs[0]
    assert first.choices[0].skill == "row-onepass"
    assert any("fits in one block" in r for r in first.choices[0].reasons)
    assert {d.choices[0].skill for d in plan.designs} >= {"row-onepass", "row-looped"}
    skipped = {sid for go in plan.groups for sid, _ in go.skipped}
    assert {"column-onepass", "split-reduction"} <= skipped


def neighbours_proposer(plan) -> TemplateProposer:  # type: ignore[no-untyped-def]
    return TemplateProposer(
        plan.designs, plan.render, plan.library, get_strategy("neighbours"), structures=2
    )


def test_stage_one_then_tuning_without_repeats(plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    archive = Archive(tmp_path / "a.sqlite")
    options = EvalOptions(device="cpu")
    result = run_search(
        plan.task,
        neighbours_proposer(plan),
        options,
        archive,
        Budget(candidates=6),
        "run-1",
        evaluate_fn=fake_judge,
    )
    stages = [t.candidate.design["stage"] for t in result.trials]
    assert stages == ["structure", "structure", "tuning", "tuning", "tuning", "tuning"]
    keys = {
        (str(t.candidate.design["groups"]), str(sorted(t.candidate.params.items())))
        for t in result.trials
    }
    assert len(keys) == 6
    best = design_from_json(result.best.candidate.design, result.best.candidate.params)  # type: ignore[union-attr]
    assert best.choices[0].skill == "row-onepass"
    # resume: the same run id continues where it stopped and never repeats a candidate
    again = run_search(
        plan.task,
        neighbours_proposer(plan),
        options,
        archive,
        Budget(candidates=9),
        "run-1",
        evaluate_fn=fake_judge,
    )
    assert len(again.trials) == 9 and again.pruned == 0
    sources = [t.candidate.source for t in again.trials]
    assert len(set(sources)) == 9


def suggest(strategy, plan, base, tried, n):  # type: ignore[no-untyped-def]
    """What the proposer's stage 2 asks the strategy, as designs."""
    space = DesignSpace.of(base, plan.library)
    history = space.observations(tried, None)
    return [space.design(r) for r in strategy.ask(space.space, history, n, 1)]


def test_the_design_space_is_the_skills_tunable_parameters(plan) -> None:  # type: ignore[no-untyped-def]
    base = plan.designs[0]
    space = DesignSpace.of(base, plan.library)
    skill = plan.library.get(base.choices[0].skill)
    tuned = {p.name for p in skill.params if p.tune}
    assert {pname for _, pname, _ in space.names} == tuned and tuned
    assert space.space.index(space.config(base)) is not None  # the default is in the space
    assert space.design(space.space.index(space.config(base))).params_json() == base.params_json()


def test_auto_tuning_is_neighbours_then_bo_and_neighbours_without_scipy(plan, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("scipy")
    assert tuning_strategy("auto").name == "neighbours-then-bo"
    base = plan.designs[0]
    for d in suggest(tuning_strategy("auto"), plan, base, [(base, 1.0)], 3):
        assert d.structure_key() == base.structure_key() and d.stage == "tuning"
        plan.render(d)  # every suggestion renders
    import kernelwright.tuning.strategies as registry

    real = registry.get_strategy

    def no_scipy(name, **options):  # type: ignore[no-untyped-def]
        if name != "neighbours":
            raise ConfigError("strategy needs 'scipy'")
        return real(name, **options)

    monkeypatch.setattr(registry, "get_strategy", no_scipy)
    assert tuning_strategy("auto").name == "neighbours"
    with pytest.raises(ConfigError, match="scipy"):
        tuning_strategy("bo")


def test_replay_only_strategies_cannot_tune_optimize() -> None:
    pytest.importorskip("kernel_tuner")
    with pytest.raises(ConfigError, match="replay only"):
        tuning_strategy("kt-pso")


def test_the_tuner_moves_one_parameter_from_the_default_before_optimising(plan) -> None:  # type: ignore[no-untyped-def]
    """With one or two timings the surrogate knows nothing near the default: the first
    suggestions change one parameter of it to the nearest value (on the H200 the Bayesian
    optimiser's first asks were 1.9x slower than the default in geometric mean); from
    ``LOCAL_FIRST`` timings on, Bayesian optimisation proposes."""
    pytest.importorskip("scipy")
    staged = get_strategy("neighbours-then-bo")
    neighbours = get_strategy("neighbours")
    base = plan.designs[0]
    first = suggest(staged, plan, base, [(base, 1.0)], 1)
    assert [params_key(d) for d in first] == [
        params_key(d) for d in suggest(neighbours, plan, base, [(base, 1.0)], 1)
    ]
    changed = {k for k, v in first[0].params_json().items() if base.params_json().get(k) != v}
    assert len(changed) == 1
    # asked for more than the local phase has left: neighbours first, then the optimiser's
    many = suggest(staged, plan, base, [(base, 1.0)], LOCAL_FIRST + 2)
    keys = [params_key(d) for d in many]
    assert len(set(keys)) == len(keys) == LOCAL_FIRST + 2
    assert keys[: LOCAL_FIRST - 1] == [
        params_key(d) for d in suggest(neighbours, plan, base, [(base, 1.0)], LOCAL_FIRST - 1)
    ]
    # enough timings: the optimiser alone (its asks are not the neighbour order)
    tried = [(base, 1.0), *((d, 1.0 + i) for i, d in enumerate(many[:LOCAL_FIRST]))]
    later = suggest(staged, plan, base, tried, 2)
    assert later and all(params_key(d) not in {params_key(x) for x, _ in tried} for d in later)


def test_a_space_that_cannot_be_built_costs_the_tuning_not_the_run(
    plan, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A skill whose tuned parameters make no space (a bad parameter definition) leaves the
    structures' verdicts and stops the tuning with the reason, instead of ending optimize."""
    import kernelwright.search.decisions as decisions
    import kernelwright.search.templates as templates

    def refuse(*_a, **_k):  # type: ignore[no-untyped-def]
        raise ConfigError("parameter 'g0_X' is on a log scale but has values <= 0")

    monkeypatch.setattr(templates.DesignSpace, "of", refuse)
    monkeypatch.setattr(decisions.DesignSpace, "of", refuse)
    proposer = neighbours_proposer(plan)
    result = run_search(plan.task, proposer, EvalOptions(device="cpu"),
                        Archive(tmp_path / "a.sqlite"), Budget(candidates=6), "run-1",
                        evaluate_fn=fake_judge)
    assert [t.candidate.design["stage"] for t in result.trials] == ["structure", "structure"]
    assert result.best is not None
    assert any("log scale" in why for _, why in proposer.skipped)


def host_bound_judge(task, candidate: Candidate, options, executor=None) -> Verdict:  # type: ignore[no-untyped-def]
    """Every candidate's calls are host-bound, whatever its parameters."""
    verdict = fake_judge(task, candidate, options, executor)
    return Verdict(Status.CORRECT, True, timing=verdict.timing,
                   labels=("host-bound: issuing a call took 1.1 ms, its device span 1.0 ms",))


def test_a_host_bound_best_is_not_tuned(plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # its kernels' parameters cannot shorten calls the host takes: every structure is tried
    # (another may launch less), then the search stops and says why
    proposer = neighbours_proposer(plan)
    result = run_search(plan.task, proposer, EvalOptions(device="cpu"),
                        Archive(tmp_path / "a.sqlite"), Budget(candidates=20), "run-1",
                        evaluate_fn=host_bound_judge)
    stages = [t.candidate.design["stage"] for t in result.trials]
    assert stages == ["structure"] * len(plan.designs) and len(plan.designs) > 2
    assert result.stopped is not None and "host-bound" in result.stopped


def test_measurements_elsewhere_become_rows_of_this_space_only_where_they_fit(plan) -> None:  # type: ignore[no-untyped-def]
    """A prior's tuned parameters fill this space's row (the base's values elsewhere); one whose
    untuned parameters differ from the base's, or that names none of the tuned ones, measured
    something else and is left out."""
    base = plan.designs[0]
    space = DesignSpace.of(base, plan.library)
    cfg = space.config(base)
    assert cfg
    name = next(iter(cfg))
    untuned = [f"g{c.group}_{k}" for c in base.choices for k in c.params if
               f"g{c.group}_{k}" not in cfg]
    assert untuned
    fixed = {f"g{c.group}_{k}": v for c in base.choices for k, v in c.params.items()}
    measurements = [({name: cfg[name]}, 2.0, "fits"),
                    ({name: cfg[name], untuned[0]: fixed[untuned[0]] + 1}, 1.0, "other"),
                    ({untuned[0]: fixed[untuned[0]]}, 1.5, "nothing tuned")]
    history = space.observations([], lambda d: measurements)
    assert [(o.source, o.time_ms) for o in history] == [("archive:fits", 2.0)]
    assert history[0].row == space.space.index(cfg)


def test_a_structure_refused_as_incorrect_is_tried_once_more_with_its_accurate_knobs(
        gemm_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The GEMM's default 3xTF32 products fail the check, so the same structure comes back at
    once with IEEE fp32 products (its skill's ``accurate`` value), is verified and tuned; the
    retry is a structure trial and is never retried itself."""
    plan = gemm_plan
    first = plan.designs[0]
    assert plan.library.get(first.choices[0].skill).param("FP32_MATH").accurate == 1
    assert first.choices[0].params["FP32_MATH"] == 0
    proposer = TemplateProposer(plan.designs, plan.render, plan.library,
                                get_strategy("neighbours"), structures=1)
    result = run_search(plan.task, proposer, EvalOptions(device="cpu"),
                        Archive(tmp_path / "a.sqlite"), Budget(candidates=3), "run-1",
                        evaluate_fn=accuracy_judge(fake_judge))
    first_trial, retry, tuned = result.trials
    assert first_trial.verdict.status == Status.INCORRECT
    assert retry.candidate.design["stage"] == "structure"
    assert retry.note.startswith("structure again, accurate: g0.FP32_MATH=1")
    changed = {k for k, v in retry.candidate.params.items()
               if first_trial.candidate.params[k] != v}
    assert changed == {"g0.FP32_MATH"}
    assert retry.verdict.correct and result.best is not None
    assert tuned.candidate.design["stage"] == "tuning"
    assert tuned.candidate.params["g0.FP32_MATH"] == 1


def test_an_incorrect_structure_already_accurate_is_not_retried(gemm_plan, tmp_path: Path
                                                                 ) -> None:  # type: ignore[no-untyped-def]
    plan = gemm_plan
    refuse_all = lambda *a, **k: Verdict(Status.INCORRECT, False, message="wrong")  # noqa: E731
    proposer = TemplateProposer(plan.designs, plan.render, plan.library,
                                get_strategy("neighbours"), structures=1)
    result = run_search(plan.task, proposer, EvalOptions(device="cpu"),
                        Archive(tmp_path / "a.sqlite"), Budget(candidates=10), "run-1",
                        evaluate_fn=refuse_all)
    accurate = [t for t in result.trials if t.note.startswith("structure again")]
    # one retry a structure with an accuracy knob (the tiled kernels' FP32_MATH; PyTorch's
    # product with our epilogue has none), each with FP32_MATH 1, then nothing is left
    knobs = [d for d in plan.designs if "FP32_MATH" in d.choices[0].params]
    assert 0 < len(knobs) < len(plan.designs)
    assert len(accurate) == len(knobs)
    assert all(t.candidate.params["g0.FP32_MATH"] == 1 for t in accurate)
    assert len(result.trials) == len(plan.designs) + len(knobs)


def test_a_knobs_accurate_value_must_be_one_of_its_values() -> None:
    from kernelwright.skills.base import skill_from_dict

    data = {"id": "s", "intent": "", "applies_to": "gemm", "variant": "tiled",
            "expected_gain": 1.0, "params": {"FP32_MATH": {"values": [0, 1], "accurate": 2}}}
    with pytest.raises(ConfigError, match="accurate = 2"):
        skill_from_dict(data)
