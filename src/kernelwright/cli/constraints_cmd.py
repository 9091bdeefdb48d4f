"""``kernelwright constraints ...``: requirements in words -> a checked constraints file.

    kernelwright constraints formulate "don't use atomics; tiles multiples of 64" -o c.toml
    kernelwright constraints check c.toml

Both print the formal model (clause, kind, how it is checked, the words it came from) and what
the solver found. A conflict is an error (exit 2, nothing written); redundant or equivalent
clauses, clauses that rule out some kernels, and words no phrase understood are shown as
warnings, and the file is written for the person to edit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from kernelwright.cli.common import err, out, output_file, user_errors
from kernelwright.constraints.formulate import Formulation
from kernelwright.constraints.model import Constraints
from kernelwright.errors import ConfigError

constraints_app = typer.Typer(
    help="Constraints in words: formulate a checked constraints file, or check one.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add the ``constraints`` command group to the app."""
    app.add_typer(constraints_app, name="constraints")


def show_model(model: Formulation, console: Console = out) -> None:
    """The model as a table, then conflicts, redundancy and unrecognised words, one a line."""
    table = Table(title="Formal constraint model", show_lines=False)
    table.add_column("clause", no_wrap=True)  # formulas read wrongly when broken
    table.add_column("kind", no_wrap=True)
    table.add_column("checked by", overflow="fold")
    table.add_column("source words", overflow="fold")
    for c in model.clauses:
        table.add_row(c.formal, c.kind.value, c.checked_by, c.words)
    console.print(table)
    console.print(
        "[dim]source: each candidate's code is checked before it is evaluated; tuning space: "
        "configurations breaking the clause are never proposed; parameters: each candidate's "
        "are checked; repeated runs: a correct candidate runs twice more on the same inputs, "
        "compared bit for bit; extra shapes: a correct candidate is also checked at each end of "
        "the range; peak memory (GPU): each checked call's peak allocation beyond its inputs, "
        "parameters and outputs. A refusal names its clause.[/]"
    )
    for line in model.conflicts:
        console.print(f"[bold red]{line}[/]", highlight=False, soft_wrap=True)
    for line in model.warnings:
        console.print(f"[yellow]{line}[/]", highlight=False, soft_wrap=True)
    for words in model.unrecognised:
        console.print(f"[yellow]not understood:[/] {words!r}", highlight=False, soft_wrap=True)


def refuse_conflicts(model: Formulation) -> None:
    """Raise when the model has a conflict (the first named in the message).

    Raises:
        ConfigError: the clauses cannot all hold.
    """
    if model.conflicts:
        more = f" (+{len(model.conflicts) - 1} more)" if len(model.conflicts) > 1 else ""
        first = model.conflicts[0].removeprefix("conflict: ")
        raise ConfigError(f"the constraints conflict: {first}{more}")


def formulated(text: str, base: Constraints | None = None) -> Constraints:
    """``optimize --constraints-text``: the model of ``text`` (added to ``base``), shown on
    stderr before anything runs.

    Raises:
        ConfigError: a conflict, or words no phrase understood (a run never starts under a
            requirement it would silently ignore).
    """
    from kernelwright.constraints.formulate import formulate

    model = formulate(text, base=base)
    show_model(model, err)
    refuse_conflicts(model)
    if model.unrecognised:
        raise ConfigError(
            f"--constraints-text: not understood: {model.unrecognised[0]!r}; rephrase it "
            "(docs/constraints.md lists the phrases) or leave it out"
        )
    assert model.constraints is not None  # no conflict
    return model.constraints


@constraints_app.command("formulate")
@user_errors
def formulate_command(
    text: Annotated[str, typer.Argument(help="Requirements in words (see docs/constraints.md).")],
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write the constraints file here.")
    ] = None,
    llm: Annotated[
        str | None,
        typer.Option(
            "--llm",
            help="Restate the words the vocabulary does not understand with this model "
            "(PROVIDER:MODEL); each restatement is checked by the vocabulary.",
        ),
    ] = None,
    llm_base_url: Annotated[
        str | None, typer.Option("--llm-base-url", help="OpenAI-compatible endpoint.")
    ] = None,
) -> None:
    """Turn requirements in words into a formal model; write it when nothing conflicts."""
    from kernelwright.constraints.formulate import formulate
    from kernelwright.constraints.writer import to_toml

    if llm is None and llm_base_url is not None:
        raise ConfigError("--llm-base-url needs --llm SPEC")
    output_file(output, "--output")
    if llm is not None:
        from kernelwright.agents.providers import make_chat_model
        from kernelwright.constraints.restate import formulate_with_llm

        model = formulate_with_llm(text, make_chat_model(llm, llm_base_url))
    else:
        model = formulate(text)
    show_model(model)
    refuse_conflicts(model)
    if output is not None and model.constraints is not None:
        output.write_text(to_toml(model.constraints, model.clauses))
        err.print(f"wrote {output}", highlight=False, soft_wrap=True)


@constraints_app.command("check")
@user_errors
def check_command(
    path: Annotated[Path, typer.Argument(help="A constraints file (TOML).")],
) -> None:
    """Validate a constraints file and show its formal model."""
    from kernelwright.constraints import load_constraints
    from kernelwright.constraints.formulate import review

    model = review(load_constraints(path))
    show_model(model)
    refuse_conflicts(model)
    err.print(f"{path}: {len(model.clauses)} clauses, no conflict", highlight=False, soft_wrap=True)
