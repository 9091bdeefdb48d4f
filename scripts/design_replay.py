"""Process replay of the structure stage: everything it decides and writes, for many tasks.

For every task file given (default: benchmarks/, heldout/ and tests/golden/tasks at the small
and full sizes) this writes one text file holding each fusion group's facts, every skill's
verdict with its reasons, the ranked options with their costs, the ranked designs, and the
emitted ``ModelNew`` of every design. Two runs on two commits diff with ``diff -r``: a refactor
that changes nothing shows no difference (tinygrad's process replay, over more tasks and
designs than the golden snapshots pin).

    python scripts/design_replay.py --out /tmp/replay-before
    git stash; python scripts/design_replay.py --out /tmp/replay-after; git stash pop
    diff -r /tmp/replay-before /tmp/replay-after

Captured graphs are cached as JSON (``--cache``, default ``replay-graphs`` beside the ``--out``
folder): capture (torch.export) is the slow part and does not change when templates do.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import warnings
from pathlib import Path

ROOTS = ("benchmarks", "heldout", "tests/golden/tasks")


def tasks(roots: list[str]) -> list[Path]:
    """Task files under ``roots`` (a file counts as itself)."""
    found: list[Path] = []
    for root in roots:
        p = Path(root)
        found += [p] if p.is_file() else sorted(x for x in p.rglob("*.py") if x.stem[0] != "_")
    return found


def graph_for(path: Path, size: str, cache: Path):  # type: ignore[no-untyped-def]
    """The captured graph of ``path`` at ``size`` (from the cache when there)."""
    from kernelwright.design.capture import capture_path
    from kernelwright.design.graph import graph_from_dict

    key = cache / f"{str(path).replace('/', '__')}.{size}.json"
    if key.exists():
        return graph_from_dict(json.loads(key.read_text()))
    graph = capture_path(path, size)
    key.write_text(json.dumps(graph.to_dict()))
    return graph


def replay(path: Path, size: str, cache: Path) -> str:
    """Everything the structure stage decides for one task at one size, as text."""
    from kernelwright.design.emit import emit
    from kernelwright.design.fusion import fuse
    from kernelwright.design.lower import lower
    from kernelwright.design.structures import group_options, rank_designs
    from kernelwright.skills.conditions import describe_facts
    from kernelwright.skills.library import SkillLibrary

    out: list[str] = [f"# {path} ({size})"]
    try:
        part = fuse(lower(graph_for(path, size, cache)))
    except Exception as exc:  # a capture or fusion failure is part of the record
        return "\n".join([*out, f"failed: {type(exc).__name__}: {exc}"]) + "\n"
    library = SkillLibrary.builtin()
    groups = []
    for g in part.groups:
        ops = ", ".join(part.graph.node(n).target for n in g.nodes)
        out.append(f"g{g.id} {g.kind}: {ops} | in {g.inputs} out {g.outputs} | {g.note}")
    for g in part.fused:
        go = group_options(part, g, library)
        groups.append(go)
        out.append(f"g{g.id} facts {json.dumps(describe_facts(go.facts), default=str)}")
        for o in go.options:
            c = o.choice
            out.append(
                f"  option {c.skill} {c.variant} {c.options} cost={o.cost:.6g} "
                f"score={o.score:.6g} params={dict(sorted(c.params.items()))}"
            )
            out += [f"    + {r}" for r in c.reasons]
        for skill, reasons in go.skipped:
            out.append(f"  skipped {skill}: {' | '.join(reasons)}")
    designs = rank_designs(groups, 30)
    for i, d in enumerate(designs):
        out.append(f"## design {i}: {d.structure_key()}")
        try:
            out.append(emit(part, d, path.read_text(), task_name=path.stem, size=size))
        except Exception as exc:  # a design that does not render is recorded as such
            out.append(f"emit failed: {type(exc).__name__}: {exc}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write one replay file per (task, size) under ``--out``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="*", default=list(ROOTS))
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--sizes", default="small,full")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    cache = args.cache or args.out.parent / "replay-graphs"
    cache.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for path in tasks(args.roots):
        for size in args.sizes.split(","):
            name = f"{str(path).replace('/', '__')}.{size}.txt"
            try:
                text = replay(path, size, cache)
            except Exception:  # keep going: one broken task must not hide the others
                failed += 1
                text = f"# {path} ({size})\nreplay crashed:\n{traceback.format_exc()}"
            (args.out / name).write_text(text)
    print(f"{len(list(args.out.glob('*.txt')))} replays in {args.out} ({failed} crashed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
