"""The bench report: ``report.md`` (plots as PNG files beside it) and a self-contained
``report.html`` (plots embedded as base64 PNG), both from a bench JSON document.

Working from the document, not from a live run, means a report can be rebuilt at any time from
``--json`` output (``kernelwright bench-report``), on a machine other than the one that ran it.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwright.bench.results import BenchResult
from kernelwright.formatting import fmt_frac, fmt_x
from kernelwright.report import plots
from kernelwright.report.tables import Table, family_table, summary_table, task_table

NO_PLOTS = "Plots need matplotlib: pip install 'kernelwright[report]'."
DEFINITIONS = (
    "fast_p: fraction of all tasks (failures included) that are correct and more than p times "
    "faster than the baseline. Geometric means: over all tasks with a failure counting 1.0, and "
    "over correct tasks only. Speed-of-light fraction: roofline floor (max of bytes / memory "
    "bandwidth and FLOPs / matrix rate) over the candidate's time. Baselines run under the same "
    "precision policy as the candidate. Definitions as in KernelBench; see docs/bench.md."
)


@dataclass(frozen=True, slots=True)
class ReportFiles:
    """What :func:`write_report` wrote."""

    markdown: Path
    html: Path
    images: tuple[Path, ...]


def write_report(document: Mapping[str, Any], out_dir: str | Path) -> ReportFiles:
    """Write ``report.md``, ``report.html`` and the plots (``plots/*.png``) under ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = [BenchResult.from_dict(t) for t in document.get("tasks", [])]
    images = draw_plots(document, results)
    written: list[Path] = []
    if images:
        (out / "plots").mkdir(exist_ok=True)
        for name, png in images.items():
            path = out / "plots" / f"{name}.png"
            path.write_bytes(png)
            written.append(path)
    md = out / "report.md"
    md.write_text(render_markdown(document, results, {n: f"plots/{n}.png" for n in images}))
    page = out / "report.html"
    page.write_text(render_html(document, results, images))
    return ReportFiles(markdown=md, html=page, images=tuple(written))


def draw_plots(document: Mapping[str, Any], results: list[BenchResult]) -> dict[str, bytes]:
    """PNG bytes of each plot by name (empty without matplotlib or without tasks)."""
    if not results or not plots.available():
        return {}
    run = document["run"]
    precision, representative = run["precision"], bool(run["representative"])
    baselines = run.get("baselines", ["eager"])
    return {
        "speedup": plots.speedup_chart(results, baselines, precision, representative),
        "fast_p": plots.fast_p_chart(results, baselines, precision, representative),
        "sol": plots.sol_chart(results, precision, representative),
    }


def headline(document: Mapping[str, Any]) -> str:
    """One sentence with the numbers a reader wants first."""
    run, s = document["run"], document["summary"]
    precision = run["precision"]
    parts = [
        f"{run['n_correct']}/{s['n_tasks']} tasks correct",
        f"fast_1 {fmt_frac(s['fast_1'])} vs eager ({precision})",
        f"geomean {fmt_x(s['geomean_speedup'])} vs eager ({precision}, failures count 1.0)",
    ]
    if s["fast_1_vs_compile"] is not None:
        parts.append(f"fast_1 {fmt_frac(s['fast_1_vs_compile'])} vs torch.compile ({precision})")
    if s["median_sol_fraction"] is not None:
        parts.append(f"median speed of light {fmt_frac(s['median_sol_fraction'])}")
    return "; ".join(parts) + "."


def _meta(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    run = document["run"]
    versions = run.get("versions", {})
    software = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(run.get("counts", {}).items()))
    size = run["size"]
    return [
        ("run", str(run["run_id"])),
        ("device", f"{run.get('device_name') or run['device']} ({run['device']}, {size} size)"),
        ("precision policy", f"{run['precision']} (candidate and baselines alike)"),
        ("baselines", ", ".join(run.get("baselines", [])) or "none"),
        ("software", software),
        # documents written before runs named their commit have none
        ("kernelwright commit", str(run.get("commit") or "not recorded")),
        ("outcomes", counts),
        ("started / finished", f"{run['started_at']} / {run['finished_at']}"),
    ]


def _title(document: Mapping[str, Any]) -> str:
    run = document["run"]
    return f"kernelwright bench: {document['summary']['n_tasks']} tasks, {run['precision']}"


def render_markdown(
    document: Mapping[str, Any], results: list[BenchResult], image_paths: Mapping[str, str]
) -> str:
    """The Markdown report; ``image_paths`` maps plot names to paths relative to it."""
    run = document["run"]
    precision = run["precision"]
    lines = [f"# {_title(document)}", "", headline(document), ""]
    if not run["representative"]:
        lines += [
            "> Timings come from the CPU (Triton's interpreter): they exercise the pipeline and "
            "say nothing about a GPU. Correctness results stand.",
            "",
        ]
    lines += [f"- **{k}**: {v}" for k, v in _meta(document)]
    lines += ["", "## Summary", "", _md_table(summary_table(document["summary"], precision)), ""]
    sections = (
        ("fast_p", "fast_p curve"),
        ("speedup", "Speedup per task"),
        ("sol", "Speed-of-light fraction per task"),
    )
    for name, heading in sections:
        if name == "fast_p" and name in image_paths:
            lines += [f"![{heading}]({image_paths[name]})", ""]
        elif name != "fast_p":
            lines += [f"## {heading}", ""]
            lines += [f"![{heading}]({image_paths[name]})" if name in image_paths else NO_PLOTS]
            lines.append("")
    lines += ["## By family", "", _md_table(family_table(document["families"], precision)), ""]
    baselines = run.get("baselines", [])
    lines += ["## Tasks", "", _md_table(task_table(results, precision, baselines)), ""]
    lines += [DEFINITIONS, ""]
    return "\n".join(lines)


def render_html(
    document: Mapping[str, Any], results: list[BenchResult], images: Mapping[str, bytes]
) -> str:
    """The self-contained HTML report (plots inline as base64 PNG, no external files)."""
    import jinja2
    from markupsafe import Markup

    run = document["run"]
    precision = run["precision"]
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("kernelwright.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    template = env.get_template("bench.html.jinja")
    baselines = run.get("baselines", [])
    return template.render(
        title=_title(document),
        headline=headline(document),
        representative=bool(run["representative"]),
        meta=_meta(document),
        tables={
            "summary": Markup(_html_table(summary_table(document["summary"], precision))),
            "families": Markup(_html_table(family_table(document["families"], precision))),
            "tasks": Markup(
                _html_table(task_table(results, precision, baselines), status_column=2)
            ),
        },
        images={
            name: base64.b64encode(images[name]).decode("ascii") if name in images else ""
            for name in ("speedup", "fast_p", "sol")
        },
        no_plots=NO_PLOTS,
        definitions=DEFINITIONS,
    )


def _md_table(table: Table) -> str:
    def row(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    rule = "|" + "|".join("---:" if a == "r" else "---" for a in table.align) + "|"
    return "\n".join([row(table.headers), rule, *(row(r) for r in table.rows)])


def _html_table(table: Table, status_column: int | None = None) -> str:
    def cls(i: int) -> str:
        return ' class="r"' if table.align[i] == "r" else ""

    head = "".join(f"<th{cls(i)}>{html.escape(h)}</th>" for i, h in enumerate(table.headers))
    body = []
    for r in table.rows:
        cells = []
        for i, c in enumerate(r):
            attr = cls(i)
            if i == status_column:
                attr = f' class="status-{"correct" if c == "correct" else "bad"}"'
            cells.append(f"<td{attr}>{html.escape(c)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
