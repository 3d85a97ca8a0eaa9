"""What every ``unifab`` command shares: output formats, ``--fail-on``, exit codes, errors and progress.

Exit codes (stable, the same for every command): 0 clean, 1 findings at or above ``--fail-on`` (or a device
that could not be collected or rendered), 2 usage or input error. Errors go to stderr as one line starting
``unifab: error:``; stdout stays pure JSON or table. Progress goes to stderr too: a Rich bar on a terminal,
a few plain lines otherwise, nothing with ``--quiet``.

Only the standard library and typer are imported at module level, so ``unifab --help`` starts fast.
"""

from __future__ import annotations

import enum
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from unifab.model import Fabric, Finding

__all__ = [
    "EXIT_CLEAN",
    "EXIT_FINDINGS",
    "EXIT_USAGE",
    "Advance",
    "FailOn",
    "FailOnOption",
    "FormatOption",
    "OutputFormat",
    "QuietOption",
    "check_titles",
    "console",
    "exit_code",
    "fail",
    "fail_lines",
    "load_fabric",
    "plural",
    "progress",
]

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
ERROR_PREFIX = "unifab: error:"


class OutputFormat(enum.StrEnum):
    TABLE = "table"
    JSON = "json"


class FailOn(enum.StrEnum):
    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    NEVER = "never"


FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="table for people, json for scripts.")]
FailOnOption = Annotated[FailOn, typer.Option(help="Exit 1 when a finding is at least this severe.")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr (errors are still printed).")]

Advance = Callable[[int], None]


def console(stderr: bool = False) -> Console:
    """Rich output; plain lines are never wrapped (a script may read them), tables fit the width."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def fail(message: str) -> NoReturn:
    """Print one ``unifab: error:`` line on stderr and exit 2."""
    fail_lines([message])


def fail_lines(messages: Sequence[str]) -> NoReturn:
    """Print every problem as its own ``unifab: error:`` line on stderr and exit 2."""
    for message in messages:
        sys.stderr.write(f"{ERROR_PREFIX} {_printable(message)}\n")
    sys.stderr.flush()
    raise typer.Exit(EXIT_USAGE)


def _printable(text: str) -> str:
    """Control characters (terminal escapes from device-provided names) shown as ``\\xNN``, never executed."""
    return "".join(c if c.isprintable() or c == "\t" else f"\\x{ord(c):02x}" for c in text)


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 finding``, ``2 findings``; ``words`` for irregular plurals."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


def exit_code(findings: Iterable[Finding], fail_on: FailOn) -> int:
    from unifab.model import Severity

    if fail_on is FailOn.NEVER:
        return EXIT_CLEAN
    threshold = Severity(fail_on.value).rank
    return EXIT_FINDINGS if any(f.severity.rank >= threshold for f in findings) else EXIT_CLEAN


def check_titles() -> dict[str, tuple[str, str]]:
    """Check id -> (title, why it hurts), from the registry."""
    from unifab.checks.registry import registry

    return {spec.id: (spec.title, spec.why) for spec in registry().values()}


class _PlainProgress:
    """Progress for a log or a pipe: a line at the start, at each quarter and at the end, on stderr."""

    def __init__(self, label: str, total: int, unit: str) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self.next_mark = 1
        self.started = time.monotonic()
        self._say(0)

    def advance(self, n: int) -> None:
        self.done += n
        if self.total <= 0:
            return
        while self.next_mark <= 4 and self.done * 4 >= self.next_mark * self.total:
            self._say(self.done)
            self.next_mark += 1

    def _say(self, done: int) -> None:
        elapsed = time.monotonic() - self.started
        total = f"/{self.total:,}" if self.total > 0 else ""
        sys.stderr.write(f"unifab: {self.label}: {done:,}{total} {self.unit} ({elapsed:.1f} s)\n")
        sys.stderr.flush()


@contextmanager
def progress(label: str, total: int, *, unit: str = "devices", quiet: bool = False) -> Iterator[Advance]:
    """Yield ``advance(n)``: a transient Rich bar on a terminal, plain lines on stderr otherwise, nothing if quiet."""
    if quiet:
        yield lambda _n: None
        return
    err = console(stderr=True)
    if not err.is_terminal:
        plain = _PlainProgress(label, total, unit)
        yield plain.advance
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=total or None)
        yield lambda n: bar.advance(task, n)


def load_fabric(bundle: Path, *, quiet: bool = False) -> Fabric:
    """Read a bundle with progress; an unusable bundle is a usage error (exit 2)."""
    from unifab.collect.bundle import count_devices, load_bundle
    from unifab.errors import UnifabError

    try:
        total = count_devices(bundle)
        if total == 0:  # not a bundle, or an empty one: load_bundle says which, with no progress line first
            return load_bundle(bundle)
        with progress(f"reading {bundle}", total, quiet=quiet) as advance:
            return load_bundle(bundle, progress=lambda _phase, n: advance(n))
    except UnifabError as exc:
        fail(str(exc))
