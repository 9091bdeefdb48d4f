"""A search run's tree (MCTS) or lineage (evolution) drawn as a picture, with matplotlib.

    nodes (search.lineage) -> layout: depth along x, leaves one row apart, a parent centred on
                              its children -> PNG

Each candidate is a dot coloured by its verdict, labelled with its id and its speedup over eager
PyTorch, joined to the candidate it was derived from; the fastest correct one is ringed. A node
whose parent is not in the run (a root, or another run's candidate) starts a tree of its own.
Nothing is drawn without matplotlib (``plots.available``).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

COLORS = {"correct": "#2ca02c", "incorrect": "#d62728", "rejected": "#ff7f0e"}
OTHER = "#7f7f7f"  # timeouts, crashes, compile errors
ROW_INCHES = 0.32
DPI = 110


def layout(nodes: Sequence[dict[str, Any]]) -> dict[Any, tuple[float, float]]:
    """(depth, row) of every node: leaves take consecutive rows in the order the run proposed
    them, a parent sits at the mean row of its children."""
    ids = {n["id"] for n in nodes}
    children: dict[Any, list[Any]] = {n["id"]: [] for n in nodes}
    roots = []
    for n in nodes:
        if n["parent"] in ids and n["parent"] != n["id"]:
            children[n["parent"]].append(n["id"])
        else:
            roots.append(n["id"])
    where: dict[Any, tuple[float, float]] = {}
    next_row = [0.0]

    def place(node: Any, depth: int) -> float:
        kids = [k for k in children[node] if k not in where]
        if not kids:
            row = next_row[0]
            next_row[0] += 1.0
        else:
            where[node] = (float(depth), 0.0)  # claimed before its children (no cycles)
            rows = [place(k, depth + 1) for k in kids]
            row = sum(rows) / len(rows)
        where[node] = (float(depth), row)
        return row

    for root in roots:
        if root not in where:
            place(root, 0)
    for n in nodes:  # anything left sits in a cycle of parents: a row of its own at depth 0
        if n["id"] not in where:
            place(n["id"], 0)
    return where


def search_tree_png(nodes: Sequence[dict[str, Any]], title: str) -> bytes:
    """The picture of ``nodes`` (see the module docstring)."""
    from matplotlib.figure import Figure

    where = layout(nodes)
    rows = max((r for _d, r in where.values()), default=0.0) + 1
    depth = max((d for d, _r in where.values()), default=0.0) + 1
    fig = Figure(figsize=(max(5.0, 1.9 * depth + 2), max(2.2, 1.0 + ROW_INCHES * rows)),
                 layout="constrained")
    ax = fig.add_subplot()
    by_id = {n["id"]: n for n in nodes}
    for n in nodes:
        if n["parent"] in by_id and n["parent"] != n["id"]:
            (x0, y0), (x1, y1) = where[n["parent"]], where[n["id"]]
            ax.plot([x0, x1], [y0, y1], color="#bbbbbb", linewidth=0.8, zorder=1)
    timed = [n for n in nodes if n["correct"] and n["ms"] is not None]
    best = min(timed, key=lambda n: n["ms"])["id"] if timed else None
    for n in nodes:
        x, y = where[n["id"]]
        color = COLORS.get(n["status"], OTHER)
        ax.scatter([x], [y], s=46, color=color, zorder=3,
                   edgecolors="black" if n["id"] == best else color,
                   linewidths=1.8 if n["id"] == best else 0.5)
        speed = n.get("speedup_vs_eager")
        label = f"#{n['id']}" + (f" {speed:.2f}x" if n["correct"] and speed else "")
        if n.get("reused"):
            label += " (reused)"
        ax.annotate(label, (x, y), xytext=(6, 0), textcoords="offset points", va="center",
                    fontsize=7)
    for status, color in [*COLORS.items(), ("other", OTHER)]:
        ax.scatter([], [], s=30, color=color, label=status)
    ax.legend(loc="upper right", fontsize=7, frameon=False)
    ax.set_xlim(-0.4, depth - 0.2)
    ax.set_ylim(rows - 0.5, -0.7)  # the run's first proposals at the top
    ax.set_xticks(range(int(depth)))
    ax.set_xlabel("derivation depth (0: a root)")
    ax.set_yticks([])
    ax.set_title(title, fontsize=10)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()
