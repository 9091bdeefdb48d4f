"""What every command shares: consoles, user-error handling, option parsing."""

from __future__ import annotations

import enum
import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from typer.core import TyperGroup

from kernelwright.errors import ConfigError, HarnessError, KernelwrightError
from kernelwright.hardware.energy import Objective
from kernelwright.records import Precision

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=enum.StrEnum)  # a choice among an option's values

LOG_WIDTH = 200  # columns of output written to a file or a pipe


def _console(stderr: bool = False) -> Console:
    """A terminal's own width; written to a file or a pipe (a log), LOG_WIDTH columns unless
    COLUMNS says otherwise, so tables keep every column whole (Rich would squeeze a table of
    long task names into 80 columns, numbers cut to an ellipsis)."""
    stream = sys.stderr if stderr else sys.stdout
    tty = getattr(stream, "isatty", lambda: False)()
    width = None if tty or os.environ.get("COLUMNS") else LOG_WIDTH
    return Console(stderr=stderr, width=width)


# Results go to stdout; progress and errors to stderr, so `--json -` stays parseable.
out = _console()
err = _console(stderr=True)

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_HARNESS = 3

# Options shared by the commands that evaluate (eval, bench, optimize): one wording everywhere.
DeviceOpt = Annotated[str, typer.Option(help="auto | cuda | cpu (Triton interpreter).")]
PrecisionOpt = Annotated[
    str, typer.Option(help="fp32 | tf32 | bf16, for candidates and baselines alike.")
]
SizeOpt = Annotated[
    str, typer.Option(help="auto | full | small (auto: full on a GPU, small on the CPU).")
]
TrialsOpt = Annotated[int, typer.Option(help="Correctness trials (fresh seed and inputs each).")]
TimeoutOpt = Annotated[float, typer.Option(help="Seconds allowed for a candidate's process.")]
BaselinesOpt = Annotated[
    bool, typer.Option("--baselines/--no-baselines", help="Time eager PyTorch and torch.compile.")
]
CompileOpt = Annotated[
    bool | None,
    typer.Option("--compile/--no-compile", help="Time torch.compile (default: on a GPU only)."),
]
TimingOpt = Annotated[bool, typer.Option("--timing/--no-timing", help="Time the candidates.")]
SeedOpt = Annotated[int | None, typer.Option(help="Base seed (default: a fresh one).")]
ArchiveOpt = Annotated[
    Path | None,
    typer.Option("--archive", help="SQLite archive (default: ~/.kernelwright/archive.sqlite)."),
]


def user_errors(fn: F) -> F:
    """Turn kernelwright's input errors into one red line and exit code 2, a failure of the
    harness itself into exit code 3 (never a traceback)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except HarnessError as exc:
            err.print(f"[bold red]harness failure:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_HARNESS) from None
        except KernelwrightError as exc:
            err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_USAGE) from None
        except KeyboardInterrupt:
            err.print("[yellow]interrupted[/]; finished results are in the archive")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def parse_precision(value: str) -> Precision:
    """``fp32`` / ``tf32`` / ``bf16`` -> Precision, with a helpful error."""
    return _parse_choice(Precision, value, "--precision")


def parse_objective(value: str) -> Objective:
    """``time`` / ``energy`` / ``edp`` -> Objective, with a helpful error."""
    return _parse_choice(Objective, value, "--objective")


def _parse_choice(kind: type[C], value: str, option: str) -> C:
    try:
        return kind(value.lower())
    except ValueError:
        choices = ", ".join(c.value for c in kind)
        raise ConfigError(f"{option} {value!r} is not one of {choices}") from None


def archive_path(path: Path | None, must_exist: bool = False) -> Path:
    """The archive to use: ``--archive`` or the default under the kernelwright home.

    A mistyped ``--archive`` must not silently start a new, empty archive: its folder has to
    exist, and for commands that only read (``must_exist``) the file too.

    Raises:
        ConfigError: the path's folder (or, with ``must_exist``, the file) does not exist.
    """
    from kernelwright.paths import default_archive_path

    if path is None:
        return default_archive_path()
    if not path.parent.is_dir():
        raise ConfigError(
            f"--archive {path}: the folder {path.parent} does not exist; "
            "create it first, or check the path"
        )
    if must_exist and not path.is_file():
        raise ConfigError(f"--archive {path}: no such archive; check the path")
    return path


def output_folder(path: Path | None, option: str = "--out") -> Path | None:
    """``path`` made ready to receive results before any work starts, so that a folder that
    cannot be written is said at once, not after a long run has nothing to write to.

    Raises:
        ConfigError: ``path`` is a file, or the folder cannot be created or written.
    """
    if path is None:
        return None
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {path}: is a file; pass a folder")
    _writable_folder(path, f"{option} {path}", "the folder")
    return path


def output_file(path: Path | None, option: str) -> Path | None:
    """``path`` checked, before any work starts, as a file a command will write (its folder
    created): ``None`` and ``-`` (stdout) pass as they are.

    Raises:
        ConfigError: ``path`` is a folder, or its folder cannot be created or written.
    """
    if path is None or str(path) == "-":
        return path
    if path.is_dir():
        raise ConfigError(f"{option} {path}: is a folder; pass a file path")
    folder = path.parent
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{option} {path}: {folder} is a file, not a folder")
    _writable_folder(folder, f"{option} {path}", "its folder")
    return path


def _writable_folder(folder: Path, where: str, name: str) -> None:
    """``folder`` created if missing and writable, else a ConfigError naming ``where``."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot create {name} ({exc.strerror or exc}); pass a "
                          "path you can write to") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"{where}: {name} is not writable; pass a path you can write to")


@contextmanager
def progress_status(enabled: bool, first: str = "starting") -> Iterator[Callable[[str], None]]:
    """A spinner on stderr showing the latest phase; a no-op when not on a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield lambda _phase: None
        return
    with err.status(first) as status:
        yield lambda phase: status.update(f"[cyan]{phase}")


class DefaultCommandGroup(TyperGroup):
    """A command group whose first argument, when it names none of its commands, belongs to its
    default command: ``kernelwright bench TASKS`` is ``kernelwright bench run TASKS``, while
    ``kernelwright bench baselines ...`` reaches the other command."""

    default_command = "run"

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Put the default command's name in front of arguments that are not a command's."""
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)
