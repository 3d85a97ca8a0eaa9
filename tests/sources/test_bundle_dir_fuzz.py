"""Whole-bundle fuzzing on a real directory, as an unprivileged user: links, permissions, FIFOs and directories
in place of files, the damage an in-memory source cannot express (tests/test_bundle_fuzz.py covers contents).

Each example copies a small twin bundle and damages one to three of the files unifab reads: a symbolic link to a
secret outside the bundle, a device directory swapped for a link to a copy of itself outside, a dangling link, a
link to itself, a FIFO, a file or directory the user may not read, a directory where a file was. Then ``unifab
check`` runs on it as ``nobody`` (root would read through every permission). What must hold on every example:
exit 0 with ``--fail-on never`` and no traceback, the secret never in the output, every damaged path that the
reader would have read named by a finding (the path or the directory it lies in), and every finding of the clean
bundle that concerns an untouched device still there. The budget is fixed (``UNIFAB_FUZZ_EXAMPLES`` / 3).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nobody import python_as_nobody

EXAMPLES = max(4, int(os.environ.get("UNIFAB_FUZZ_EXAMPLES", "25")) // 3)
SECRET = "root:$6$fuzz-secret-7c1d:19000:0:99999:7:::"
# files the reader reads in every twin host and SONiC switch (a damaged one must be reported)
READ = ("cmd/ibdev2netdev.txt", "cmd/lldpcli.json", "cmd/show_gids.txt", "cmd/ibv_devinfo.txt", "cmd/lspci-vvv.txt")
SWITCH_READ = ("sonic/config_db.json",)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from unifab.twin.generate import generate

    out = tmp_path_factory.mktemp("dirfuzz") / "b"
    generate(out, gpus=8, seed=3, scenarios=("pfc-mismatch", "ecn-off", "mtu-mismatch", "dscp-lossy"))
    return out


@pytest.fixture(scope="module")
def as_nobody(clean: Path) -> Iterator[tuple[list[str], Path]]:
    with python_as_nobody(["check", str(clean), "-q", "--format", "json"]) as found:
        yield found


def _check(prefix: list[str], bundle: Path) -> subprocess.CompletedProcess[str]:
    argv = [*prefix, "-m", "unifab.cli", "check", str(bundle), "-q", "--format", "json", "--fail-on", "never"]
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)


def _link_out(path: Path, outside: Path) -> None:
    path.unlink()
    path.symlink_to(outside / "shadow")


def _dir_link_out(path: Path, outside: Path) -> None:
    """The file's directory is moved outside the bundle (with the secret beside it) and linked back."""
    moved = outside / f"moved-{abs(hash(str(path)))}"
    shutil.move(str(path.parent), moved)
    (moved / path.name).write_text(SECRET + "\n")
    path.parent.symlink_to(moved, target_is_directory=True)


def _dangling(path: Path, outside: Path) -> None:
    path.unlink()
    path.symlink_to(path.with_name("no-such-file"))


def _loop(path: Path, outside: Path) -> None:
    path.unlink()
    path.symlink_to(path.name)


def _fifo(path: Path, outside: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _no_read(path: Path, outside: Path) -> None:
    path.chmod(0o000)


def _no_list(path: Path, outside: Path) -> None:
    path.parent.chmod(0o000)


def _directory(path: Path, outside: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "stray.txt").write_text("not the file you expected\n")


# damage -> (how, whether the damaged path itself must be named: False where what is named is its directory)
DAMAGE: dict[str, tuple[Callable[[Path, Path], None], bool]] = {
    "link-out": (_link_out, True),
    "dir-link-out": (_dir_link_out, False),
    "dangling": (_dangling, True),
    "loop": (_loop, True),
    "fifo": (_fifo, True),
    "no-read": (_no_read, True),
    "no-list": (_no_list, False),
    "directory": (_directory, True),
}


def _key(finding: dict[str, object]) -> str:
    return json.dumps([finding["check"], finding["subject"]], sort_keys=True)


def _opened_up(root: Path) -> None:
    for path in (root, *root.rglob("*")):
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_links_permissions_and_fifos_never_crash_leak_or_stop_the_rest(
    clean: Path, as_nobody: tuple[list[str], Path]
) -> None:
    prefix, shared = as_nobody
    outside = shared / "outside"
    outside.mkdir()
    (outside / "shadow").write_text(SECRET + "\n")
    baseline = _check(prefix, clean if os.geteuid() != 0 else _shared_copy(clean, shared / "clean"))
    assert baseline.returncode == 0, baseline.stderr
    clean_findings = json.loads(baseline.stdout)["findings"]
    candidates = sorted(
        [f"hosts/{h.name}/{rel}" for h in (clean / "hosts").iterdir() for rel in READ]
        + [f"switches/{s.name}/{rel}" for s in (clean / "switches").iterdir() for rel in SWITCH_READ]
    )
    for example in range(EXAMPLES):
        rng = random.Random(example)
        bundle = _shared_copy(clean, shared / f"e{example}")
        victims = rng.sample(candidates, rng.randint(1, 3))
        plan = {rel: rng.choice(sorted(DAMAGE)) for rel in victims}
        if len({rel.rsplit("/", 1)[0] for rel in victims}) < len(victims):  # two damages in one directory
            plan = dict(list(plan.items())[:1])
        for rel, kind in plan.items():
            DAMAGE[kind][0](bundle / rel, outside)
        try:
            proc = _check(prefix, bundle)
        finally:
            _opened_up(bundle)
        where = f"example {example}: {plan}"
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (where, proc.stderr[-2000:])
        assert SECRET not in proc.stdout and "fuzz-secret" not in proc.stdout, where
        findings = json.loads(proc.stdout)["findings"]
        named = json.dumps([f for f in findings if f["check"].startswith("INPUT-")])
        for rel, kind in plan.items():
            path = rel if DAMAGE[kind][1] else rel.rsplit("/", 1)[0]
            assert path in named, (where, rel, kind, named[:2000])
        touched = {rel.split("/")[1] for rel in plan}
        now = {_key(f) for f in findings}
        kept = [f for f in clean_findings if not any(device in json.dumps(f) for device in touched)]
        missing = [f["check"] for f in kept if _key(f) not in now]
        assert not missing, (where, missing)


def _shared_copy(bundle: Path, target: Path) -> Path:
    shutil.copytree(bundle, target, symlinks=True)
    _opened_up(target)
    return target
