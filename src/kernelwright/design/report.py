"""What an optimize run leaves on disk: the best file, every candidate, and a readable report.

DIR/best.py                    the fastest correct candidate (absent when none was correct), or
                               the task's own model as ``ModelNew`` when eager PyTorch beat it
DIR/candidates/NNN_<stage>_<status>.py   every candidate as evaluated, and its verdict .json
DIR/plan.md, DIR/designs/      with ``--plan``: the plan and each design's file, nothing run
DIR/report.md                  graph and fusion groups, each skill checked (held / skipped and
                               why), every candidate's verdict, what each skill did, the
                               speed-of-light fraction and what stayed with PyTorch
DIR/tree.png                   the search tree or lineage as a picture, when candidates were
                               derived from others and matplotlib is installed
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from kernelwright.formatting import fmt_ms, fmt_x
from kernelwright.hardware.energy import Objective
from kernelwright.records import Task, Timing, Verdict


def write_outputs(result: Any, out: Path, archive: Any) -> list[Path]:
    """Write best.py, candidates/ and report.md; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    cdir = out / "candidates"
    cdir.mkdir(exist_ok=True)
    for i, t in enumerate(result.trials, 1):
        stage = str(t.candidate.design.get("stage", t.candidate.origin))
        stem = f"{i:03d}_{stage}_{t.verdict.status.value}"
        (cdir / f"{stem}.py").write_text(t.candidate.source)
        (cdir / f"{stem}.json").write_text(
            json.dumps(
                {
                    "candidate_id": t.candidate_id,
                    "note": t.note,
                    "design": t.candidate.design,
                    "params": t.candidate.params,
                    "verdict": t.verdict.to_dict(),
                },
                indent=2,
            )
        )
        written.append(cdir / f"{stem}.py")
    best = result.best
    if best is not None:
        eager = result.eager_is_better
        source = eager_model_source(result.task) if eager else best.candidate.source
        (out / "best.py").write_text(source)
        written.append(out / "best.py")
    picture = _tree_picture(result, out)
    if picture is not None:
        written.append(picture)
    (out / "report.md").write_text(report_markdown(result, picture.name if picture else None))
    written.append(out / "report.md")
    return written


def _tree_picture(result: Any, out: Path) -> Path | None:
    """DIR/tree.png (see the module docstring); None when there is nothing to draw."""
    from kernelwright.report.plots import available
    from kernelwright.report.tree_plot import search_tree_png
    from kernelwright.search.lineage import lineage

    if not available() or not any(t.candidate.parent is not None for t in result.trials):
        return None
    where = "CPU timings, not representative of a GPU" if result.device == "cpu" else result.device
    title = (f"{result.task.name}: candidates and the ones they were derived from "
             f"({result.precision.value} policy; {where})")
    numbers = _numbers(result.trials)
    nodes = [n | {"id": numbers[n["id"]], "parent": numbers.get(n["parent"])}
             for n in lineage(result.trials)]  # numbered as the report's table
    path = out / "tree.png"
    path.write_bytes(search_tree_png(nodes, title))
    return path


def eager_model_source(task: Task) -> str:
    """A drop-in ``ModelNew`` that is the task's own model (eager PyTorch)."""
    return (
        task.source.rstrip()
        + "\n\n\n# Eager PyTorch was faster than every kernel kernelwright verified for this "
        + "task.\nclass ModelNew(Model):\n    pass\n"
    )


def _ms(v: Verdict) -> str:
    t = v.timing.candidate
    return fmt_ms(t.median_ms if t else None)


def _sol(v: Verdict) -> str:
    return f"{100 * v.sol.fraction:.0f}%" if v.sol and v.sol.fraction is not None else "-"


def _gemm_math(params: Any, variant: str) -> str:
    """What a GEMM group's kernels compute with under each policy."""
    from kernelwright.design.families.gemm.precision import math_under

    fp32_math = int(params.get("FP32_MATH", 0))
    return "; ".join(
        f"{p}: {math_under(p, fp32_math, variant)}" for p in ("fp32", "tf32", "bf16")
    )


def _best_math(candidate: Any, policy: str) -> list[str]:
    """The math the best candidate's GEMM kernels used under the run's policy."""
    from kernelwright.design.families.gemm.precision import math_under

    lines = []
    for gid, group in (candidate.design.get("groups") or {}).items():
        if group.get("kind") == "gemm":
            fp32_math = int(candidate.params.get(f"{gid}.FP32_MATH", 0))
            how = math_under(policy, fp32_math, str(group.get("variant", "tiled")))
            lines.append(f"{gid} (GEMM) math under {policy}: {how}")
    return ["", *lines] if lines else []


def _left_by_design(plan: Any, candidate: Any) -> list[str]:
    """The groups a template candidate's design leaves to PyTorch although a template serves
    them (``design.structures.vendor_groups``), for the best candidate's paragraph."""
    groups = candidate.design.get("groups") if candidate.origin == "template" else None
    if not groups:
        return []
    chosen = {int(str(k).lstrip("g")) for k in groups}
    graph = plan.partition.graph
    left = [
        f"g{g.group.id} ({', '.join(dict.fromkeys(graph.node(n).op for n in g.group.nodes))})"
        for g in plan.groups if g.options and g.group.id not in chosen
    ]
    if not left:
        return []
    return [f"This design leaves {', '.join(left)} to PyTorch's own kernels (cuBLAS, cuDNN or "
            "SDPA); every other group runs on kernelwright's."]


def plan_markdown(plan: Any) -> list[str]:
    """Graph and fusion groups, each skill checked (held or skipped, and why), ranked designs."""
    lines = ["## Graph and fusion", ""]
    lines += ["| group | kind | domain | reduced dims | ops |", "|---|---|---|---|---|"]
    graph = plan.partition.graph
    for g in plan.partition.groups:
        ops = ", ".join(dict.fromkeys(graph.node(n).op for n in g.nodes))
        dom = "x".join(str(h) for h in g.layout.hint) if g.layout else "-"
        red = ", ".join(str(d) for d in g.layout.reduce) if g.layout and g.layout.reduce else "-"
        lines.append(f"| g{g.id} | {g.kind} | {dom} | {red} | {ops} |")
    rewritten = [
        f"- g{g.id}: {graph.node(n).op}, {graph.node(n).origin}"
        for g in plan.partition.groups
        for n in g.nodes
        if graph.node(n).origin
    ]
    if rewritten:  # ops the task does not call by name
        lines += ["", "Rewritten before fusion:", *rewritten]
    framework = plan.framework_groups()
    if framework:
        lines += ["", "Left to PyTorch:"]
        lines += [f"- {f['group']}: {f['ops']} ({f['why'] or 'no template'})" for f in framework]
    lines += ["", "## Skills checked", ""]
    for go in plan.groups:
        lines.append(f"### g{go.group.id} ({go.group.kind})")
        facts = go.facts
        lines.append(
            f"facts: domain {list(facts.domain)}, reduced extent {facts.reduced_length}, "
            f"{facts.parallel_length} positions, schedule {facts.schedule or '-'}"
            + (f", top-{facts.k}" if facts.k else "")
        )
        for o in go.options:
            c = o.choice
            opts = f" + {', '.join(c.options)}" if c.options else ""
            lines.append(f"- applies: **{c.skill}**{opts} (score {o.score:.2f})")
            lines += [f"  - {r}" for r in c.reasons]
        for sid, reasons in go.skipped:
            lines.append(f"- skipped: {sid}: {'; '.join(reasons)}")
        if go.group.kind == "gemm" and go.options:
            first = go.options[0].choice
            lines.append(f"- math by policy: {_gemm_math(first.params, first.variant)}")
        lines.append("")
    lines += ["## Designs, most promising first", ""]
    served = [g.group.id for g in plan.groups if g.options]
    for i, d in enumerate(plan.designs):
        params = ", ".join(f"{k}={v}" for k, v in sorted(d.params_json().items()))
        chosen = {c.group for c in d.choices}
        left = [f"g{g}" for g in served if g not in chosen]
        vendor = f"; {', '.join(left)} left to PyTorch" if left else ""
        lines.append(f"- d{i:02d}: `{d.structure_key()}` ({params}){vendor}")
    if not plan.designs:
        lines.append("None: no skill applies to any group.")
    lines.append("")
    return lines


def write_plan(plan: Any, out: Path) -> list[Path]:
    """``plan.md`` and every ranked design's file under ``out/designs/``, nothing evaluated."""
    ddir = out / "designs"
    ddir.mkdir(parents=True, exist_ok=True)
    written = []
    for i, d in enumerate(plan.designs):
        path = ddir / f"d{i:02d}.py"
        path.write_text(plan.render(d))
        written.append(path)
    (out / "plan.md").write_text(
        "\n".join([f"# kernelwright plan: {plan.task.name} ({plan.device}, {plan.size})", ""])
        + "\n"
        + "\n".join(plan_markdown(plan))
    )
    written.append(out / "plan.md")
    return written


def report_markdown(result: Any, tree_picture: str | None = None) -> str:
    """The report's text (see the module docstring); ``tree_picture`` names the tree's image
    beside it, when one was drawn."""
    plan = result.plan
    lines = [f"# kernelwright optimize: {result.task.name}", ""]
    search = result.search
    lines += [
        f"- run `{result.run_id}` on {result.device} at the task's {result.size} size",
        f"- candidates evaluated: {search.evaluated if search else len(result.trials)}"
        + (f" (stopped: {search.stopped}; {search.pruned} duplicates pruned)" if search else ""),
    ]
    setup = [p for t in result.trials for p in t.verdict.setup]
    if setup:
        lines.append("- before the first candidate ran, the session's set-up: "
                     + ", ".join(f"{p.name} {p.seconds:.1f} s" for p in setup))
    if search is not None:
        lines.append(
            f"- equivalence pruning saved {search.pruned_equivalent} evaluation(s): "
            f"{search.pruned} repeated a candidate's source, {search.reused} rendered the same "
            "kernel at the task's shapes as an evaluated candidate and reused its verdict"
        )
        if search.screened_spilling:
            lines.append(
                f"- the spill screen saved {search.screened_spilling} evaluation(s): tuning moves "
                "whose kernels, compiled for the GPU, spill registers where their structure's "
                "best candidate's do not"
            )
    if result.device == "cpu":
        lines.append(
            "- timings under Triton's interpreter on the CPU say nothing about a GPU; "
            "correctness does"
        )
    best = result.best
    lines += ["", "## Result", ""]
    confirmed = search.confirmed if search is not None else None
    chosen = result.chosen
    if best is None and confirmed is not None and chosen is not None:
        number = _numbers(result.trials).get(chosen.candidate_id, chosen.candidate_id)
        lines.append(
            f"The fastest candidate ({number}, {_ms(chosen.verdict)} ms) failed its second "
            f"evaluation: {confirmed.verdict.message}. Nothing is returned.")
    elif best is None:
        if result.trials:
            lines.append("No correct candidate.")
        elif plan is not None and plan.designs and search is not None:
            lines.append(f"Nothing was evaluated: the run stopped ({search.stopped}) before "
                         "its first candidate"
                         + (": no design could be rendered (below)." if result.unrendered
                            else "."))
        else:
            lines.append("Nothing was evaluated: no template applies.")
    else:
        v = best.verdict
        t = v.timing
        number = _numbers(result.trials).get(best.candidate_id, best.candidate_id)
        lines += [
            f"Best: candidate {number} ({best.note or 'template'}), {_ms(v)} ms,"
            f" {fmt_x(t.speedup_vs_eager)} vs eager, {fmt_x(t.speedup_vs_compile)} vs torch.compile"
            f" ({v.precision.value}), speed of light {_sol(v)}"
            + (f" of {v.sol.floor_ms:.4f} ms ({v.sol.bound}-bound)" if v.sol else ""),
        ]
        if confirmed is not None and chosen is not None:
            first, second = chosen.verdict.timing.candidate, v.timing.candidate
            faster = first and second and second.median_ms < first.median_ms
            lines.append(
                f"Its time is a second evaluation's, made once the search was over: the first "
                f"read {_ms(chosen.verdict)} ms, "
                + ("and the second read faster: the two differ by the run-to-run spread."
                   if faster else "the least of the run's times, and so biased low."))
        lines += _energy_line(t, result.objective)
        lines += _best_math(best.candidate, v.precision.value)
        lines += _left_by_design(plan, best.candidate)
        if result.eager_is_better:
            worse = ("Slower than eager PyTorch" if result.objective is Objective.TIME
                     else f"Worse than eager PyTorch by {result.objective.value}")
            lines.append("")
            lines.append(
                f"**{worse}**: `best.py` is the task's own model (eager "
                "PyTorch), not this candidate (kept under `candidates/`); see the skills below "
                "for what did not pay."
            )
    if result.unrendered:
        lines += ["", "## Designs not rendered", "",
                  "Designs the templates could not turn into a candidate, and why:", "",
                  *[f"- `{design}`: {why}" for design, why in result.unrendered]]
    if result.best_profile:
        lines += ["", "## Hardware diagnoses of the best candidate", "",
                  "Its kernels under Nsight Compute (`profile.csv` beside this report):", "",
                  *result.best_profile]
    lines += _constraints_section(result)
    if result.diagnoses:
        lines += ["", "## Hardware diagnoses of the profiled kernel", "",
                  "From the Nsight Compute profile given (`--profile`):", "",
                  *result.diagnoses]
        relieved = getattr(plan, "relieved", ())
        if relieved:
            lines += ["", "Skills that relieve these limits ranked higher: "
                      + ", ".join(f"`{s}`" for s in relieved) + "."]
    lines += [""] + plan_markdown(plan)
    lines += ["## Candidates", ""]
    metered = any(t.verdict.timing.candidate_energy for t in result.trials)
    lines += [
        "| # | stage | design | status | ms | vs eager | vs compile | SOL |"
        + (" mJ |" if metered else "") + " note |",
        "|---|---|---|---|---|---|---|---|" + ("---|" if metered else "") + "---|",
    ]
    for i, t in enumerate(result.trials, 1):
        v = t.verdict
        d = t.candidate.design
        stage = d.get("stage", t.candidate.origin)
        skills = " + ".join(d.get("skills", [])) or t.candidate.origin
        status = v.status.value + (f" ({v.message[:60]})" if not v.correct and v.message else "")
        energy = v.timing.candidate_energy
        lines.append(
            f"| {i} | {stage} | {skills} | {status} | {_ms(v)} "
            f"| {fmt_x(v.timing.speedup_vs_eager)} | {fmt_x(v.timing.speedup_vs_compile)} "
            f"| {_sol(v)} |"
            + ((f" {energy.mj_per_call:.3f} |" if energy else " - |") if metered else "")
            + f" {t.note} |"
        )
    lines += _tree(result.trials, tree_picture)
    lines += ["", "## What each skill did", ""]
    lines += [
        "| skill | applied | correct | best vs eager | geomean vs eager |",
        "|---|---|---|---|---|",
    ]
    per: dict[str, list[Verdict]] = defaultdict(list)
    for t in result.trials:
        for s in t.candidate.design.get("skills", []):
            per[s].append(t.verdict)
    for s, vs in sorted(per.items()):
        sp = [v.timing.speedup_vs_eager for v in vs if v.correct and v.timing.speedup_vs_eager]
        geo = math.exp(sum(math.log(x) for x in sp) / len(sp)) if sp else None
        lines.append(
            f"| {s} | {len(vs)} | {sum(v.correct for v in vs)} | "
            f"{fmt_x(max(sp) if sp else None)} | {fmt_x(geo)} |"
        )
    lines.append("")
    return "\n".join(lines)


def _constraints_section(result: Any) -> list[str]:
    """Each constraint of the run, how it was checked, and the candidates it refused."""
    c = result.constraints
    if c is None:
        return []
    before = "the source, before evaluation"
    rows: list[tuple[str, str, str]] = [
        (f"kernel languages: {', '.join(c.backends)}", "each launch's language, " + before,
         "constraint-backend")]
    if c.precision is not None:
        rows.append((f"precision policy {c.precision.value}", "the harness: candidate and both "
                     "baselines under it, outputs against float64", "constraint-precision"))
    if c.dtypes is not None:
        rows.append((f"storage {c.dtypes.storage}, math {c.dtypes.math}",
                     "mapped onto the precision policy", "constraint-precision"))
    rows += [(f"`{r}`", "tuning spaces pruned; each candidate's parameters, before evaluation",
              "constraint-space") for r in c.space.restrictions]
    rows += [(f"no `{op}`", before, "constraint-forbidden-op") for op in c.forbidden_ops]
    rows += [(f"no {k}", before + " (CUDA in `load_inline` included)",
              "constraint-forbidden-construct") for k in c.forbidden_constructs]
    rows += [(f"signature `{n}({', '.join(p)})`", before, "constraint-signature")
             for n, p in c.signatures]
    props = c.properties
    if props.deterministic:
        rows.append(("bit-identical run to run", "the harness: two more runs on the first "
                     "trial's inputs, compared bit for bit", "constraint-determinism"))
    rows += [(f"works for {r.describe()}", "the harness: extra checked runs at both ends",
              "constraint-shape-range") for r in props.shape_ranges]
    if props.memory_ceiling_bytes is not None:
        rows.append((f"peak extra memory at most {props.memory_ceiling_bytes} bytes",
                     "the harness, on a GPU (not checked on the CPU)", "constraint-memory"))
    refused: dict[str, int] = defaultdict(int)
    for t in result.trials:
        for check in {v.check for v in t.verdict.violations}:
            refused[check] += 1
    out = ["", "## Constraints", "", "Enforced for every proposer:", "",
           "| constraint | how it is checked | candidates it refused |", "|---|---|---|"]
    out += [f"| {what} | {how} | {refused.get(check, 0)} |" for what, how, check in rows]
    return out


# a relative standard error above this makes the report call the energies rough
ROUGH_ENERGY = 0.2


def _energy_line(t: Timing, objective: Objective) -> list[str]:
    """The best candidate's energy beside eager's and torch.compile's (nothing when the GPU
    had no energy counter)."""
    if t.candidate_energy is None:
        return []
    others = [f"{name} {e.mj_per_call:.3f} mJ" for name, e in
              (("eager", t.eager_energy), ("torch.compile", t.compile_energy)) if e is not None]
    e = t.candidate_energy
    spread = f" +- {e.mj_per_call_se:.3f}" if e.mj_per_call_se else ""
    lines = [
        "",
        f"Energy: {e.mj_per_call:.3f}{spread} mJ a call at {e.watts:.0f} W"
        + (f" ({', '.join(others)})" if others else "")
        + f", from the GPU's energy counter; candidates ranked by {objective.value}.",
    ]
    if e.mj_per_call_se > ROUGH_ENERGY * e.mj_per_call:
        lines.append(
            f"These energies are rough (a standard error over {ROUGH_ENERGY:.0%}): the counter "
            "steps every ~100 ms, longer than many of the timed windows, so a window's share of "
            "a step decides much of the sum (even a power above the board's limit); `optimize "
            "--objective energy` times longer windows."
        )
    return lines


def _tree(trials: Any, picture: str | None) -> list[str]:
    """The search tree or lineage (MCTS, evolution): each derived candidate under its parent."""
    derived = [t for t in trials if t.candidate.parent is not None]
    if not derived:
        return []
    lines = ["", "## Search tree", ""]
    if picture:
        lines += [f"![search tree]({picture})", ""]
    lines += ["Each candidate derived from another, with its parent:", ""]
    numbers = _numbers(trials)
    for t in derived:
        # a parent outside this run (a resumed run's) is named by its archive id
        named = numbers.get(t.candidate.parent, f"archive candidate {t.candidate.parent}")
        lines.append(f"- {named} -> {numbers[t.candidate_id]}: {t.note}")
    return lines


def _numbers(trials: Any) -> dict[int, int]:
    """Each candidate's number in the report, by its archive id: its first row of the
    Candidates table, as the files under ``candidates/`` are numbered (archive ids run on across
    the tasks and runs that share an archive, so they are not the rows)."""
    numbers: dict[int, int] = {}
    for i, t in enumerate(trials, 1):
        numbers.setdefault(t.candidate_id, i)
    return numbers
