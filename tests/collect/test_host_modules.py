"""What the host reader takes for the host checks: loaded modules (``cmd/lsmod.txt``), the PCIe parent map and the
bridges whose ACS redirects peer-to-peer traffic (``cmd/lspci-vvv.txt``)."""

from __future__ import annotations

from pathlib import Path

from host_bundle import write_host

from unifab import layout

LSPCI = "host/lspci_vvv_dell_8xH100_8xCX7.txt"


def test_lsmod_becomes_the_hosts_module_set(tmp_path: Path) -> None:
    text = "Module                  Size  Used by\nnvidia_peermem         16384  0\nmlx5_ib               466944  0\n"
    fabric = write_host(tmp_path / "b", {layout.LSMOD: text})
    assert fabric.hosts["h1"].kernel_modules == {"nvidia_peermem", "mlx5_ib"}


def test_no_lsmod_is_unknown_and_a_bad_one_is_located(tmp_path: Path) -> None:
    assert write_host(tmp_path / "a", {layout.UNAME: "5.15.0-105-generic\n"}).hosts["h1"].kernel_modules is None
    fabric = write_host(tmp_path / "b", {layout.LSMOD: "Module Size Used by\nnvidia lots 0\n"})
    assert fabric.hosts["h1"].kernel_modules is None
    [problem] = [f for f in fabric.input_findings if f.check == "INPUT-UNREADABLE"]
    assert problem.evidence["file"] == "hosts/h1/cmd/lsmod.txt" and problem.evidence["line"] == 2


def test_lspci_gives_parents_and_acs_redirect(tmp_path: Path, samples: Path) -> None:
    fabric = write_host(tmp_path / "b", {layout.LSPCI: (samples / LSPCI).read_text()})
    host = fabric.hosts["h1"]
    assert host.pci_parents["0000:19:00.0"] == "0000:17:01.0"
    assert host.pci_parents["0000:17:01.0"] == "0000:16:00.0"
    # the PMC-Sierra switch's downstream ports redirect; root ports with only SrcValid do not count
    assert host.acs_redirect == {f"0000:82:0{i}.0": ("ReqRedir", "CmpltRedir", "UpstreamFwd") for i in range(4)}
    assert host.acs_enabled_bridges is not None and "0000:00:0c.0" in host.acs_enabled_bridges


def test_without_lspci_acs_is_unknown(tmp_path: Path) -> None:
    host = write_host(tmp_path / "b", {layout.UNAME: "6.8.0\n"}).hosts["h1"]
    assert host.acs_redirect is None and host.pci_parents == {}
