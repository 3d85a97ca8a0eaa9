"""Input problems met while reading a bundle: each becomes an ``INPUT-UNREADABLE`` or ``INPUT-MISSING`` finding.

Every reader takes one :class:`Problems` and records what it could not read, so one bad file costs that
file (a located finding), never the device or the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from unifab.errors import ParseError
from unifab.model import Finding, Severity
from unifab.sources import SourcePath

T = TypeVar("T")

__all__ = ["Problems"]


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

    def parse_file(self, path: SourcePath, parser: Callable[[str, str], T], device: str | None = None) -> T | None:
        """Read and parse one file; on any failure record a finding and return ``None``."""
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            self.unreadable(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})", device=device)
            return None
        except OSError as exc:
            self.unreadable(path, f"cannot read: {exc.strerror or exc}", device=device)
            return None
        try:
            return parser(text, self.rel(path))
        except ParseError as exc:
            self.unreadable(path, exc.expected, line=exc.line, device=device)
            return None
