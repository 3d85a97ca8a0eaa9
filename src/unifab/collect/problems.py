"""Input problems met while reading a bundle: each becomes an ``INPUT-UNREADABLE``, ``INPUT-MISSING`` or
``INPUT-STALE`` finding.

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

__all__ = ["MAX_REASON", "Problems"]

MAX_REASON = 500  # characters of a recorded failure reason quoted in a finding


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

    def stale(
        self, path: SourcePath, device: str, data_from: str | None, failed_at: str | None, reason: str | None
    ) -> None:
        """``device``'s last collect failed and its files are an earlier collect's (``path``: its collect.json)."""
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
                subject={"kind": "switch", "id": f"switch:{device}", "device": device, "path": self.rel(path)},
                message=message,
                evidence={
                    "device": device,
                    "file": self.rel(path),
                    "data_from": data_from,
                    "failed_at": failed_at,
                    "reason": why,
                },
                entities=(f"switch:{device}",),
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
