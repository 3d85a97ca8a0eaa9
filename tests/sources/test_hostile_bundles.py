"""A bundle is untrusted input: symbolic links that leave it are never followed (the content of the file they
name never reaches a finding, the JSON or the HTML), FIFOs never block a read, and what the running user may not
read — checked as a real unprivileged user (``runuser -u nobody``) — is a reported problem naming the path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from nobody import python_as_nobody

from unifab.collect.bundle import load_bundle
from unifab.sources import DirectorySource, OutsideBundleError, SourcePath

UNIFAB = [sys.executable, "-m", "unifab.cli"]
SECRET = "root:$6$topsecret-hash-9f3a:19000:0:99999:7:::"


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from unifab.twin.generate import generate

    out = tmp_path_factory.mktemp("hostile") / "b"
    generate(out, gpus=8, seed=2)
    return out


def _copy(bundle: Path, where: Path) -> Path:
    target = where / "bundle"
    shutil.copytree(bundle, target, symlinks=True)
    return target


def _outputs(bundle: Path, tmp_path: Path) -> str:
    """Everything ``check`` shows of the bundle: the table, the JSON and the HTML report."""
    html = tmp_path / "r.html"
    table = subprocess.run(
        [*UNIFAB, "check", str(bundle), "-q", "--limit", "0", "--html", str(html), "--fail-on", "never"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert table.returncode == 0, table.stderr
    doc = subprocess.run(
        [*UNIFAB, "check", str(bundle), "-q", "--format", "json", "--fail-on", "never"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return table.stdout + table.stderr + doc.stdout + html.read_text()


def test_a_symlink_to_a_file_outside_is_refused_and_never_echoed(clean: Path, tmp_path: Path) -> None:
    secret = tmp_path / "shadow"
    secret.write_text(SECRET + "\n")
    bundle = _copy(clean, tmp_path)
    victim = bundle / "hosts" / "gpu001" / "cmd" / "ibdev2netdev.txt"
    victim.unlink()
    victim.symlink_to(secret)
    (bundle / "switches" / "leaf-su1-r0" / "sonic" / "appl_db.json").unlink()
    (bundle / "switches" / "leaf-su1-r0" / "sonic" / "appl_db.json").symlink_to("/etc/passwd")
    shown = _outputs(bundle, tmp_path)
    assert "topsecret" not in shown and "root:" not in shown
    fabric = load_bundle(bundle)
    refused = {f.subject["path"]: f.message for f in fabric.input_findings if f.check == "INPUT-UNREADABLE"}
    assert "leaves the bundle" in refused["hosts/gpu001/cmd/ibdev2netdev.txt"]
    assert "leaves the bundle" in refused["switches/leaf-su1-r0/sonic/appl_db.json"]
    with pytest.raises(OutsideBundleError):
        DirectorySource(bundle).read_bytes("hosts/gpu001/cmd/ibdev2netdev.txt")


def test_a_symlinked_directory_outside_is_not_listed(clean: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "secret-name-eth9").mkdir(parents=True)
    (outside / "secret-name-eth9" / "mtu").write_text("9000\n")
    bundle = _copy(clean, tmp_path)
    net = bundle / "hosts" / "gpu001" / "sys" / "class" / "net"
    shutil.rmtree(net)
    net.symlink_to(outside)
    source = DirectorySource(bundle)
    assert source.names("hosts/gpu001/sys/class/net") == []
    assert "leaves the bundle" in source.refused["hosts/gpu001/sys/class/net"]
    assert "secret-name-eth9" not in _outputs(bundle, tmp_path)


def test_links_inside_the_bundle_are_followed(clean: Path, tmp_path: Path) -> None:
    """A /sys mirror is full of relative links; those that stay inside read as their target."""
    bundle = _copy(clean, tmp_path)
    cmd = bundle / "hosts" / "gpu001" / "cmd"
    (cmd / "ibdev2netdev.orig").write_bytes((cmd / "ibdev2netdev.txt").read_bytes())
    (cmd / "ibdev2netdev.txt").unlink()
    (cmd / "ibdev2netdev.txt").symlink_to("ibdev2netdev.orig")
    root = SourcePath(DirectorySource(bundle))
    assert (root / "hosts/gpu001/cmd/ibdev2netdev.txt").read_bytes() == (cmd / "ibdev2netdev.orig").read_bytes()
    assert len(load_bundle(bundle).hosts["gpu001"].nics) == len(load_bundle(clean).hosts["gpu001"].nics)


def test_a_fifo_or_a_directory_is_never_read_as_a_file(tmp_path: Path) -> None:
    cmd = tmp_path / "hosts" / "h1" / "cmd"
    cmd.mkdir(parents=True)
    os.mkfifo(cmd / "ibdev2netdev.txt")  # opening it for reading without O_NONBLOCK would wait forever
    (cmd / "uname-r.txt").mkdir()
    source = DirectorySource(tmp_path)
    assert source.kind("hosts/h1/cmd/ibdev2netdev.txt") is None
    for rel in ("hosts/h1/cmd/ibdev2netdev.txt", "hosts/h1/cmd/uname-r.txt"):
        with pytest.raises(OSError, match="not a regular file"):
            source.read_bytes(rel)
    assert "not a regular file" in source.refused["hosts/h1/cmd/ibdev2netdev.txt"]
    proc = subprocess.run(
        [*UNIFAB, "check", str(tmp_path), "-q"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 2 and "no device had anything readable" in proc.stderr


# --- as an unprivileged user ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def as_nobody(clean: Path) -> Iterator[tuple[list[str], Path]]:
    """``(command prefix, shared directory)``: run a Python with unifab and its dependencies as ``nobody``."""
    with python_as_nobody(["check", str(clean), "-q", "--format", "json"]) as found:
        yield found


def test_unreadable_files_and_directories_are_reported_as_nobody(
    clean: Path, as_nobody: tuple[list[str], Path]
) -> None:
    prefix, shared = as_nobody
    bundle = shared / "unreadable"
    shutil.copytree(clean, bundle)
    for path in (bundle, *bundle.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (bundle / "hosts" / "gpu001" / "cmd").chmod(0o000)  # cannot be listed
    (bundle / "hosts" / "gpu001" / "sys").chmod(0o644)  # listed, but nothing inside can be reached
    (bundle / "switches" / "leaf-su1-r0" / "sonic" / "config_db.json").chmod(0o000)
    (bundle / "switches" / "leaf-su1-r1").chmod(0o000)
    (bundle / "scheduler").chmod(0o000)
    try:
        proc = subprocess.run(
            [*prefix, "-m", "unifab.cli", "check", str(bundle), "-q", "--format", "json", "--fail-on", "never"],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
    finally:
        for path in (bundle, *bundle.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "PermissionError" not in proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    unreadable = {f["subject"]["path"]: f["message"] for f in findings if f["check"] == "INPUT-UNREADABLE"}
    for path in (
        "hosts/gpu001/cmd",
        "hosts/gpu001/sys",
        "switches/leaf-su1-r0/sonic/config_db.json",
        "switches/leaf-su1-r1",
        "scheduler",
    ):
        assert path in unreadable, (path, sorted(unreadable))
        assert "Permission denied" in unreadable[path]
    # the rest of the bundle is still read: nothing else is unreadable
    assert not [p for p in unreadable if p.startswith(("switches/leaf-su1-r2", "hosts/gpu001/cmd/"))]
