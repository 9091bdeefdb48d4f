"""The ``kernelwright`` command line. Each command lives in its own module and stays thin:
parse options, call one library function, render the result with Rich."""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

app = typer.Typer(
    name="kernelwright",
    help="Expert-guided GPU kernel design: verified, faster kernels from PyTorch models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Modules that register commands on `app` (each defines `register(app)`).
COMMAND_MODULES = (
    "kernelwright.cli.eval_cmd",
    "kernelwright.cli.archive_cmd",
    "kernelwright.cli.check_task_cmd",
    "kernelwright.cli.tune_cmd",
    "kernelwright.cli.bench_cmd",
    "kernelwright.cli.optimize_cmd",
    "kernelwright.cli.constraints_cmd",
    "kernelwright.cli.diagnose_cmd",
    "kernelwright.cli.profile_cmd",
)

for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def _print_version(value: bool) -> None:
    if value:
        from kernelwright import __version__

        typer.echo(f"kernelwright {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Expert-guided GPU kernel design: verified, faster kernels from PyTorch models."""


def main() -> None:
    """Console-script entry point. SIGTERM is handled like Ctrl-C: the command stops its
    judge and candidates' processes, keeps what it finished, and says so."""
    import signal

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    app()
