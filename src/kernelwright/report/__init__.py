"""Reports people read at a glance: Markdown and self-contained HTML with plots.

``write_report(document, out_dir)`` turns a bench JSON document (:mod:`kernelwright.bench`)
into ``report.md`` and ``report.html``. Plots need matplotlib (``kernelwright[report]``); without
it the reports keep their tables and say how to get the plots.
"""

from kernelwright.report.bench_report import ReportFiles, render_html, render_markdown, write_report

__all__ = ["ReportFiles", "render_html", "render_markdown", "write_report"]
