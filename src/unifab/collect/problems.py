"""Input problems met while reading a bundle: each becomes an ``INPUT-UNREADABLE``, ``INPUT-PARTIAL``,
``INPUT-MISSING`` or ``INPUT-STALE`` finding.

Every reader takes one :class:`Problems` and records what it could not read, so one bad file costs that
file (a located finding), never the device or the run. A parser that reads past a bad row (it takes a
:class:`~unifab.errors.ParseProblems` collector, see docs/parsers.md) is called through
:meth:`Problems.parse_file_partial`: a bad row costs that row, an ``INPUT-PARTIAL`` warning per problem
(at most :data:`MAX_PARTIAL` per file, then one finding counting the rest); a file with nothing usable is
still ``INPUT-UNREADABLE``. :meth:`Problems.parse_file` does the same for any parser whose signature takes
``problems`` (docs/parsers.md: ``parse(text, source, problems=None)``), so a collector that calls a parser
which later learns to read past bad rows reports them without a change at the call site.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TypeVar

from unifab.collect.not_checked import checks_for
from unifab.errors import ParseError, ParseProblem, ParseProblems
from unifab.model import Finding, Severity
from unifab.sources import SourcePath

T = TypeVar("T")

__all__ = ["MAX_PARTIAL", "MAX_REASON", "Problems", "takes_problems"]

MAX_REASON = 500  # characters of a recorded failure reason quoted in a finding
MAX_PARTIAL = 20  # INPUT-PARTIAL findings listed per file; the rest are counted in one more


@dataclass(slots=True)
class Problems:
    """Input findings gathered while reading; paths are bundle-relative."""

    root: SourcePath
    findings: list[Finding] = field(default_factory=list)

    def rel(self, path: SourcePath) -> str:
        return path.relative_to(self.root)

    def unreadable(self, path: SourcePath, reason: str, line: int | None = None, device: str | None = None) -> None:
        where = self.rel(path) + (f":{line}" if line is not None else "")
        subject = {"kind": "file", "path": self.rel(path)}
        if device:
            subject["device"] = device
        self.findings.append(
            Finding(
                check="INPUT-UNREADABLE",
                severity=Severity.ERROR,
                subject=subject,
                message=f"{where}: {reason}",
                evidence={"file": self.rel(path), "line": line, "reason": reason},
                entities=(f"file:{self.rel(path)}",),
            )
        )

    def partial(
        self,
        path: SourcePath,
        problem: ParseProblem,
        device: str | None = None,
        not_checked: str | None = None,
        checks: Sequence[str] = (),
    ) -> None:
        """One thing of ``path`` that could not be read while the rest was: an ``INPUT-PARTIAL`` warning.

        ``not_checked`` says in words which checks cannot judge what was skipped (``None`` when that is not
        clear); ``checks`` names their ids (the readers pass :func:`~unifab.collect.not_checked.checks_for`).
        """
        rel = self.rel(path)
        where = rel + (f":{problem.line}" if problem.line is not None else "")
        where += f" [{problem.key}]" if problem.key is not None else ""
        expected = problem.expected if problem.expected.startswith("expected ") else f"expected {problem.expected}"
        message = f"{where}: {expected}; skipped {problem.skipped}"
        named = [c for c in checks if not (not_checked and c in not_checked)]
        if not_checked and named:
            message += f" ({not_checked}: {', '.join(named)})"
        elif not_checked:
            message += f" ({not_checked})"
        elif named:
            message += f" (not judged for what was skipped: {', '.join(named)})"
        subject = {"kind": "file", "path": rel, "skipped": problem.skipped}
        if problem.key is not None:
            subject["key"] = problem.key
        if problem.line is not None:
            subject["line"] = str(problem.line)
        if device:
            subject["device"] = device
        self.findings.append(
            Finding(
                check="INPUT-PARTIAL",
                severity=Severity.WARNING,
                subject=subject,
                message=message[: MAX_REASON * 2],
                evidence={
                    "file": rel,
                    "line": problem.line,
                    "key": problem.key,
                    "expected": problem.expected[:MAX_REASON],
                    "skipped": problem.skipped,
                    "not_checked": not_checked or (", ".join(checks) if checks else None),
                    "checks": list(checks),
                },
                entities=(f"file:{rel}",),
            )
        )

    def partials(
        self,
        path: SourcePath,
        problems: Sequence[ParseProblem],
        device: str | None = None,
        not_checked: str | None = None,
        checks: Sequence[str] = (),
    ) -> None:
        """:meth:`partial` for each problem (repeats dropped), at most :data:`MAX_PARTIAL`; then one finding
        counting how many more the file has."""
        seen: set[tuple[str | None, int | None, str, str]] = set()
        unique = []
        for problem in problems:
            mark = (problem.key, problem.line, problem.skipped, problem.expected)
            if mark not in seen:
                seen.add(mark)
                unique.append(problem)
        for problem in unique[:MAX_PARTIAL]:
            self.partial(path, problem, device=device, not_checked=not_checked, checks=checks)
        more = len(unique) - MAX_PARTIAL
        if more <= 0:
            return
        rel = self.rel(path)
        subject = {"kind": "file", "path": rel, "skipped": "more"}
        if device:
            subject["device"] = device
        self.findings.append(
            Finding(
                check="INPUT-PARTIAL",
                severity=Severity.WARNING,
                subject=subject,
                message=f"{rel}: {more} more problem{'s' if more != 1 else ''} not listed "
                f"(the first {MAX_PARTIAL} are); each skipped what it names, the rest of the file was read",
                evidence={"file": rel, "more": more, "listed": MAX_PARTIAL, "checks": list(checks)},
                entities=(f"file:{rel}",),
            )
        )

    def missing(self, path: SourcePath, why: str, device: str) -> None:
        self.findings.append(
            Finding(
                check="INPUT-MISSING",
                severity=Severity.WARNING,
                subject={"kind": "file", "path": self.rel(path), "device": device},
                message=f"{self.rel(path)} is missing: {why}",
                evidence={"file": self.rel(path)},
                entities=(f"file:{self.rel(path)}",),
            )
        )

    def stale(
        self,
        path: SourcePath,
        device: str,
        data_from: str | None,
        failed_at: str | None,
        reason: str | None,
        kind: str = "switch",
    ) -> None:
        """``device``'s last collect failed and its files are an earlier collect's (``path``: its collect.json);
        ``kind``: ``"switch"`` or ``"host"`` (the agent's collect)."""
        age = f"from {data_from}" if data_from else "of unknown age"
        why = (reason or "no reason recorded")[:MAX_REASON]
        message = (
            f"{device}: the data read is stale: the collect at {failed_at or 'an unrecorded time'} failed ({why}); "
            f"the files are {age}"
        )
        self.findings.append(
            Finding(
                check="INPUT-STALE",
                severity=Severity.ERROR,
                subject={"kind": kind, "id": f"{kind}:{device}", "device": device, "path": self.rel(path)},
                message=message,
                evidence={
                    "device": device,
                    "file": self.rel(path),
                    "data_from": data_from,
                    "failed_at": failed_at,
                    "reason": why,
                },
                entities=(f"{kind}:{device}",),
            )
        )

    def _read_text(self, path: SourcePath, device: str | None) -> str | None:
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            self.unreadable(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})", device=device)
        except OSError as exc:
            self.unreadable(path, f"cannot read: {exc.strerror or exc}", device=device)
        return None

    def parse_file_partial(
        self,
        path: SourcePath,
        parser: Callable[[str, str, ParseProblems], T],
        device: str | None = None,
        not_checked: str | None = None,
    ) -> T | None:
        """Read and parse one file with a parser that reads past bad rows.

        What the parser could not read becomes ``INPUT-PARTIAL`` findings (see :meth:`partials`) and its
        result is returned; a file with nothing usable (the parser raises) is ``INPUT-UNREADABLE`` and ``None``.
        Each finding names the checks that read the file (:func:`~unifab.collect.not_checked.checks_for`).
        """
        text = self._read_text(path, device)
        if text is None:
            return None
        log = ParseProblems(self.rel(path))
        try:
            result = parser(text, self.rel(path), log)
        except ParseError as exc:
            self.unreadable(path, exc.expected, line=exc.line, device=device)
            return None
        self.partials(path, log.problems, device=device, not_checked=not_checked, checks=checks_for(self.rel(path)))
        return result

    def parse_file(
        self,
        path: SourcePath,
        parser: Callable[[str, str], T],
        device: str | None = None,
        not_checked: str | None = None,
    ) -> T | None:
        """Read and parse one file; on any failure record a finding and return ``None``.

        A parser that takes ``problems`` (see :func:`takes_problems`) is called as by
        :meth:`parse_file_partial`: what it skipped becomes ``INPUT-PARTIAL`` findings (with ``not_checked``).
        """
        if takes_problems(parser):
            partial: Callable[[str, str, ParseProblems], T] = parser  # type: ignore[assignment]
            return self.parse_file_partial(path, partial, device=device, not_checked=not_checked)
        text = self._read_text(path, device)
        if text is None:
            return None
        try:
            return parser(text, self.rel(path))
        except ParseError as exc:
            self.unreadable(path, exc.expected, line=exc.line, device=device)
            return None

    def parse_tree(
        self,
        base: SourcePath,
        files: Iterable[SourcePath],
        parser: Callable[[Mapping[str, str], str], T],
        device: str | None = None,
    ) -> T | None:
        """Read ``files`` (under ``base``) and hand ``{path relative to base: text}`` to a tree parser (sysfs).

        A file that cannot be read is ``INPUT-UNREADABLE`` and left out. A tree parser that takes ``problems``
        skips the files whose content it cannot read: each an ``INPUT-PARTIAL`` naming that file (and the checks
        that read it, :func:`~unifab.collect.not_checked.checks_for`). A tree with
        nothing usable (the parser raises) is ``INPUT-UNREADABLE`` on the file the error names, else ``base``.
        """
        texts: dict[str, str] = {}
        for path in sorted(files):
            try:
                texts[path.relative_to(base)] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                self.unreadable(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})", device=device)
            except OSError as exc:
                self.unreadable(path, f"cannot read: {exc.strerror or exc}", device=device)
        if not texts:
            return None
        source = self.rel(base)

        def blamed(where: str) -> SourcePath:
            return self.root / where if where.startswith(source + "/") else base

        log = ParseProblems(source)
        try:
            if takes_problems(parser):
                partial: Callable[[Mapping[str, str], str, ParseProblems], T] = parser  # type: ignore[assignment]
                result = partial(texts, source, log)
            else:
                result = parser(texts, source)
        except ParseError as exc:
            self.unreadable(blamed(exc.source), exc.expected, line=exc.line, device=device)
            return None
        for problem in log.problems:
            file = blamed(problem.source)
            self.partial(file, problem, device=device, checks=checks_for(self.rel(file)))
        return result


@cache
def takes_problems(parser: Callable[..., object]) -> bool:
    """Whether ``parser`` reads past bad rows: its third parameter is ``problems`` (docs/parsers.md)."""
    try:
        params = list(inspect.signature(parser).parameters)
    except (TypeError, ValueError):  # a builtin or a callable without a signature: a plain parser
        return False
    return len(params) >= 3 and params[2] == "problems"
