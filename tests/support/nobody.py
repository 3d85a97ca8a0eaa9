"""Run unifab as the unprivileged user ``nobody`` (tests run as root, whose home, and so the virtualenv's Python,
``nobody`` cannot reach): unifab and the third-party packages a real run imports are copied (hard links where
possible) into a directory every user can reach, and a Python of the same version that ``nobody`` may run is
found. Used by the permission tests of the bundle reader and of ``unifab collect``."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def shared_dir() -> Path | None:
    """A fresh directory every user can reach (each ancestor searchable by others), or ``None``."""
    for base in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
        path = Path(base).resolve()
        if path.is_dir() and all(p.stat().st_mode & stat.S_IXOTH for p in (path, *path.parents)):
            return Path(tempfile.mkdtemp(prefix="unifab-nobody-", dir=path))
    return None


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _modules_used(argv: list[str], env: dict[str, str] | None) -> set[Path]:
    """The top-level third-party packages ``unifab <argv>`` imports (found by running it once, as we are)."""
    sites = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['unifab', *{argv!r}]\n"
        "try:\n    runpy.run_module('unifab.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "for m in list(sys.modules.values()):\n"
        "    f = getattr(m, '__file__', None)\n"
        "    if f: print(f, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300, env=env
    )
    tops: set[Path] = set()
    for line in proc.stderr.splitlines():
        for site in sites:
            if line.startswith(site + os.sep):
                tops.add(Path(site) / Path(line).relative_to(site).parts[0])
    return tops


@contextmanager
def python_as_nobody(probe_argv: list[str], env: dict[str, str] | None = None) -> Iterator[tuple[list[str], Path]]:
    """``(command prefix, shared directory)``: the prefix runs a Python with unifab and what ``unifab
    <probe_argv>`` imports, as ``nobody``; the directory is one every user can reach, removed afterwards.

    Not root: the prefix is this Python (we are unprivileged already). No ``runuser``: skip, or fail under
    ``UNIFAB_REQUIRE_SERVICES=1``.
    """
    if os.geteuid() != 0:
        shared = shared_dir() or Path(tempfile.mkdtemp())
        try:
            yield [sys.executable], shared
        finally:
            shutil.rmtree(shared, ignore_errors=True)
        return
    runuser = shutil.which("runuser")
    if runuser is None:
        if os.environ.get("UNIFAB_REQUIRE_SERVICES") == "1":
            pytest.fail("runuser is required (UNIFAB_REQUIRE_SERVICES=1): apt-get install util-linux")
        pytest.skip("runuser not installed")
    shared = shared_dir()
    assert shared is not None, "no directory every user can reach"
    try:
        lib = shared / "lib"
        lib.mkdir()
        import unifab

        shutil.copytree(Path(unifab.__file__).parent, lib / "unifab", ignore=shutil.ignore_patterns("__pycache__"))
        for top in _modules_used(probe_argv, env):
            if top.name == "unifab" or not top.exists():
                continue
            if top.is_dir():
                shutil.copytree(top, lib / top.name, copy_function=_link_or_copy, dirs_exist_ok=True)
            else:
                _link_or_copy(str(top), str(lib / top.name))
        for path in (shared, *shared.rglob("*")):
            mode = path.lstat().st_mode
            if not stat.S_ISLNK(mode):
                path.chmod(mode | stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) or mode & stat.S_IXUSR else 0))
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        candidates = [os.path.realpath(sys.executable), f"/usr/bin/python{version}", shutil.which(f"python{version}")]
        base = [runuser, "-u", "nobody", "--", "env", f"PYTHONPATH={lib}", "PYTHONDONTWRITEBYTECODE=1"]
        for python in filter(None, candidates):
            probe = subprocess.run(
                [*base, python, "-c", "import unifab.cli"], capture_output=True, timeout=60, check=False
            )
            if probe.returncode == 0:
                yield [*base, python], shared
                return
        pytest.fail(f"no Python {version} that user nobody may run imports unifab (tried {candidates})")
    finally:
        shutil.rmtree(shared, ignore_errors=True)
