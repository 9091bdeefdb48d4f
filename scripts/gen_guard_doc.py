"""Regenerate the check table in docs/guard.md from the guard's registry.

python scripts/gen_guard_doc.py      # rewrites the part between the two markers
"""

from __future__ import annotations

from pathlib import Path

from kernelwright.evaluate.guard.registry import all_checks

DOC = Path(__file__).resolve().parents[1] / "docs" / "guard.md"
BEGIN, END = "<!-- checks:begin -->", "<!-- checks:end -->"


def table() -> str:
    rows = ["| check | stage | catches | how |", "|---|---|---|---|"]
    for c in all_checks():
        rows.append(f"| `{c.name}` | {c.stage} | {c.catches} | {c.how} |")
    return "\n".join(rows)


def main() -> None:
    text = DOC.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{BEGIN}\n{table()}\n{END}{tail}")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
