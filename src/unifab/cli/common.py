"""What every ``unifab`` command shares: output formats, ``--fail-on``, exit codes, errors and progress.

Exit codes (stable, the same for every command): 0 clean, 1 findings at or above ``--fail-on`` (or a device
that could not be collected or rendered), 2 usage, input or output error (a bundle with no device or nothing
readable, an unwritable output path, stdout closed or full), 3 internal error (a bug: a short message on
stderr and the traceback in a file it names), 130 interrupted. Errors go to stderr as one line starting
``unifab: error:``; stdout stays pure JSON or table. Progress goes to stderr too: a Rich bar on a terminal,
a few plain lines otherwise, nothing with ``--quiet``. :class:`UnifabGroup` is where every command's
unexpected exception becomes exit 2 or 3 instead of a traceback.

Only the standard library and typer are imported at module level, so ``unifab --help`` starts fast.
"""

from __future__ import annotations

import enum
import errno
import functools
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from rich.console import Console

    from unifab.collect.record_cache import RecordCache
    from unifab.model import Fabric, Finding

__all__ = [
    "EXIT_CLEAN",
    "EXIT_FINDINGS",
    "EXIT_HELP",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "Advance",
    "FailOn",
    "FailOnOption",
    "FormatOption",
    "OutputFormat",
    "QuietOption",
    "UnifabGroup",
    "check_titles",
    "console",
    "exit_code",
    "fail",
    "fail_lines",
    "load_fabric",
    "nothing_read",
    "plural",
    "printable",
    "progress",
    "record_cache",
]

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
ERROR_PREFIX = "unifab: error:"
EXIT_HELP = (
    "Exit codes: 0 clean; 1 findings at or above --fail-on; 2 usage, input or output error (one 'unifab: error:' "
    "line); 3 internal error (the traceback is written to a file the message names)."
)


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
    """Rich output; plain lines are never wrapped (a script may read them), tables fit the width.

    A closed stdout raises :class:`BrokenPipeError` (exit 2 in :class:`UnifabGroup`) instead of Rich's own
    ``SystemExit(1)``, which would read as "findings".
    """
    return _console_class()(stderr=stderr, highlight=False, soft_wrap=True)


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, "stdout was closed")

    return _Console


def fail(message: str) -> NoReturn:
    """Print one ``unifab: error:`` line on stderr and exit 2."""
    fail_lines([message])


def fail_lines(messages: Sequence[str]) -> NoReturn:
    """Print every problem as its own ``unifab: error:`` line on stderr and exit 2."""
    for message in messages:
        sys.stderr.write(f"{ERROR_PREFIX} {printable(message)}\n")
    sys.stderr.flush()
    raise typer.Exit(EXIT_USAGE)


def printable(text: str) -> str:
    """Control characters (terminal escapes from device-provided names) shown as ``\\xNN``, never executed:
    :func:`unifab.report.text.display`, the one rule for every table, line and report."""
    from unifab.report.text import display

    return display(text)


class UnifabGroup(TyperGroup):
    """The root command group: whatever a command lets escape becomes an honest exit code, never a traceback.

    * a :class:`~unifab.errors.UnifabError` (a usage or input problem some command did not catch): exit 2;
    * stdout closed by its reader (``unifab check B | head -1``) or full, or an output path that cannot be
      written (:class:`OSError`): one ``unifab: error:`` line, exit 2;
    * Ctrl-C: exit 130 (typer's own handling);
    * anything else is a bug: one line naming it and a file holding the traceback, exit 3.

    stdout is flushed before the command counts as done, so a pipe closed early is seen here and not as
    Python's "Exception ignored" at shutdown (which would exit 120).
    """

    def invoke(self, ctx: Any) -> Any:  # typer's vendored click.Context
        from unifab.errors import IntentError, UnifabError

        if sys.stdout is None or sys.stdout.closed:  # started with stdout closed (``unifab check B >&-``)
            fail("stdout is closed: redirect it to a file or /dev/null")
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()
        except (typer.Exit, typer.Abort, typer.TyperException):  # typer's own: exit codes, usage errors, Ctrl-C
            raise
        except BrokenPipeError:
            _detach_stdout()
            fail("stdout was closed before the output was complete")
        except IntentError as exc:
            fail_lines(exc.problems)
        except UnifabError as exc:
            fail(str(exc))
        except OSError as exc:
            if exc.filename is None:  # stdout (or another stream) could not take the output
                _detach_stdout()
                fail(f"cannot write the output: {exc.strerror or exc}")
            fail(f"{exc.filename}: {exc.strerror or exc}")
        except Exception as exc:
            internal_error(exc)


def internal_error(exc: BaseException) -> NoReturn:
    """A bug: one line on stderr naming the exception and the file holding its traceback; exit 3."""
    text = "".join(traceback.format_exception(exc))
    where: str | None = None
    try:
        fd, where = tempfile.mkstemp(prefix="unifab-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(f"unifab {' '.join(sys.argv[1:])}\n\n{text}")
    except OSError:
        where = None
    summary = printable(f"{type(exc).__name__}: {exc}")[:300]
    if where is not None:
        sys.stderr.write(
            f"unifab: internal error (a bug in unifab, not in your input): {summary}\n"
            f"unifab: the traceback is in {where}; please attach it to a bug report\n"
        )
    else:  # nowhere to write it: the traceback itself, so that it is not lost
        sys.stderr.write(f"unifab: internal error (a bug in unifab, not in your input): {summary}\n{text}")
    sys.stderr.flush()
    raise typer.Exit(EXIT_INTERNAL)


def _detach_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so that what is still buffered cannot fail again at exit."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test runner's buffer)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


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


def load_fabric(bundle: Path, *, quiet: bool = False, cache: RecordCache | None = None) -> Fabric:
    """Read a bundle with progress; an unusable bundle is an input error (exit 2).

    Unusable: not a bundle, a bundle with no device, or one where no device had anything readable (every
    file missing or unreadable): checking nothing must not pass as "no findings". What the directory source
    refused without a reader seeing it (a directory that cannot be listed) is an INPUT-UNREADABLE finding of
    :func:`~unifab.collect.bundle.load_bundle`. ``cache``: the parsed-record cache to read through (``unifab
    check``; :mod:`unifab.collect.record_cache`).
    """
    from unifab.collect.bundle import count_devices, load_bundle
    from unifab.errors import UnifabError
    from unifab.sources import SourcePath, open_source

    try:
        root = SourcePath(open_source(bundle))
        total = count_devices(root)
        if total == 0:  # not a bundle, or an empty one: load_bundle says which, with no progress line first
            fabric = load_bundle(root)
        else:
            with progress(f"reading {bundle}", total, quiet=quiet) as advance:
                fabric = load_bundle(root, progress=lambda _phase, n: advance(n), cache=cache)
    except ValueError as exc:  # an archive that is not one
        fail(str(exc))
    except UnifabError as exc:
        fail(str(exc))
    problem = nothing_read(fabric)
    if problem is not None:
        fail(f"{bundle}: {problem}")
    return fabric


def nothing_read(fabric: Fabric) -> str | None:
    """Why ``fabric`` holds nothing to check (no device, or no device with anything readable), else ``None``."""
    if not fabric.hosts and not fabric.switches:
        return "the bundle has no device (nothing under hosts/ or switches/, no ib/ibnetdiscover.txt)"
    if fabric.switches or fabric.links:
        return None
    if any(
        h.nics or h.gpus or h.kernel or h.gpu_driver or h.acs_enabled_bridges is not None for h in fabric.hosts.values()
    ):
        return None
    problems = fabric.input_findings
    if not problems:
        return "no device had anything readable (none of the files unifab reads was there)"
    return f"no device had anything readable ({plural(len(problems), 'input problem')}; first: {problems[0].message})"


def record_cache(bundle: Path | None, directory: Path | None, off: bool) -> RecordCache | None:
    """The parsed-record cache a check reads through (docs/architecture.md, Performance).

    ``--cache DIR``: that directory, whatever the bundle's size (one it cannot use is a usage error). Else the
    default: ``UNIFAB_CACHE_DIR`` (``off`` for none) or ``${XDG_CACHE_HOME:-~/.cache}/unifab/records``, for a
    bundle of more than :data:`~unifab.collect.parallel.POOL_MIN_DEVICES` devices only (below it a read is
    quick and the cache would only fill a disk); a default directory it cannot use is a warning, not a
    failure. ``--no-cache``: none. ``bundle`` ``None`` (``unifab serve``, whose bundle arrives from its store
    after start-up): the default directory whatever the size."""
    from unifab.collect.record_cache import CacheDirError, RecordCache, default_cache_dir

    if off:
        if directory is not None:
            fail("--cache and --no-cache do not combine")
        return None
    explicit = directory is not None
    if directory is None:
        from unifab.collect.bundle import count_devices
        from unifab.collect.parallel import POOL_MIN_DEVICES

        directory = default_cache_dir()
        if directory is None:
            return None
        if bundle is not None and (not bundle.is_dir() or count_devices(bundle) <= POOL_MIN_DEVICES):  # tar: none
            return None
    try:
        return RecordCache.open(directory)
    except CacheDirError as exc:
        if explicit:
            fail(f"--cache {directory}: {exc.strerror}")
        sys.stderr.write(printable(f"unifab: warning: record cache not used: {directory}: {exc.strerror}") + "\n")
        return None
