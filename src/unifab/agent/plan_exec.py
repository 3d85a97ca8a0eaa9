"""How ``unifab agent apply`` touches the host: commands as argv lists (never a shell) with a timeout, and
sysfs/configfs/debugfs files read and written in Python under a root directory (``/`` on a host, a copy of a
host's tree in tests; the host script's ``$UNIFAB_ROOT``).

:class:`HostIo` is the real thing; the executor takes any :class:`Io`, so a test can wrap it (to inject a
fault into one step) without the executor knowing.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["CommandResult", "HostIo", "Io"]


@dataclass(frozen=True, slots=True)
class CommandResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def reason(self) -> str:
        """One line saying why the command failed."""
        text = " ".join((self.stderr or self.stdout).split())
        return f"exit {self.returncode}" + (f": {text[:300]}" if text else "")


class Io(Protocol):
    def run(self, argv: Sequence[str], timeout: float) -> CommandResult: ...
    def read_file(self, path: str) -> str | None: ...
    def write_file(self, path: str, text: str) -> list[str]: ...
    def remove_file(self, path: str, created_dirs: Sequence[str]) -> None: ...


@dataclass(frozen=True, slots=True)
class HostIo:
    """Commands from ``PATH`` and files under ``root``."""

    root: Path = Path("/")

    def local(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def run(self, argv: Sequence[str], timeout: float) -> CommandResult:
        try:
            done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
        except FileNotFoundError:
            return CommandResult(127, "", f"{argv[0]}: not installed")
        except subprocess.TimeoutExpired:
            return CommandResult(124, "", f"{argv[0]}: no answer within {timeout:g} s")
        except OSError as exc:
            return CommandResult(126, "", f"{argv[0]}: {exc.strerror or exc}")
        return CommandResult(done.returncode, done.stdout, done.stderr)

    def read_file(self, path: str) -> str | None:
        """The file's text; ``None`` when it does not exist."""
        try:
            return self.local(path).read_text(errors="replace")
        except FileNotFoundError:
            return None

    def write_file(self, path: str, text: str) -> list[str]:
        """Write ``text`` (creating missing directories, as configfs wants); the directories it created."""
        target = self.local(path)
        created: list[str] = []
        missing = [p for p in [target.parent, *target.parent.parents] if not p.exists()]
        for d in reversed(missing):
            d.mkdir()
            created.append(str(d))
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        return created

    def remove_file(self, path: str, created_dirs: Sequence[str]) -> None:
        """Take back a file that did not exist before (and the directories made for it), as far as the kernel
        lets: a sysfs attribute cannot be unlinked, a configfs directory can be removed."""
        with contextlib.suppress(OSError):
            self.local(path).unlink()
        for d in reversed(created_dirs):
            with contextlib.suppress(OSError):
                Path(d).rmdir()
