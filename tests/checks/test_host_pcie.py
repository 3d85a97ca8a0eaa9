"""HOST-PCIE-DOWNGRADED and HOST-ACS over the real Dell XE9680 capture (8 H100, 8 ConnectX-7, PEX890xx switches)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from host_bundle import write_host

from unifab.checks.context import CheckContext
from unifab.checks.host_pcie import check_acs, check_pcie_downgraded, pci_path, safe_bdf
from unifab.model import Fabric, Finding, Gpu, Host, Nic, PcieLink, Severity

SAMPLE = "host/lspci_vvv_dell_8xH100_8xCX7.txt"
# GPU 19:00.0 below downstream port 17:01.0, ConnectX-7 1a:00.0 below 17:02.0 (one PEX890xx switch); the Gen4
# ConnectX-6 Dx 1b:00.0 sits below 17:03.0, a Gen5 port that trained at 16GT/s because of it
NICS = {"mlx5_0": ("eth0", "0000:1a:00.0"), "mlx5_1": ("eth1", "0000:1b:00.0")}
GPUS = {0: ("0000:19:00.0", "mlx5_0")}
OK_LINK = "LnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)"
ACS_OFF = "ACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-"
ACS_ON = "ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"  # as 82:00.0


def _block(text: str, slot: str, old: str, new: str) -> str:
    """``text`` with ``old`` replaced by ``new`` inside device ``slot``'s block only (what lspci would print)."""
    start = text.index(f"\n{slot} ") + 1
    end = text.index("\n\n", start)
    block = text[start:end]
    assert old in block
    return text[:start] + block.replace(old, new) + text[end:]


def _run(tmp_path: Path, samples: Path, edits: Sequence[tuple[str, str, str]] = ()) -> tuple[Fabric, list[Finding]]:
    text = (samples / SAMPLE).read_text()
    for slot, old, new in edits:
        text = _block(text, slot, old, new)
    fabric = write_host(tmp_path / "b", {"cmd/lspci-vvv.txt": text}, NICS, GPUS)
    ctx = CheckContext.build(fabric)
    return fabric, [*check_pcie_downgraded(ctx), *check_acs(ctx)]


def test_the_real_capture_is_clean(tmp_path: Path, samples: Path) -> None:
    """The switch port above the Gen4 ConnectX-6 Dx shows "(downgraded)"; the NIC itself runs at its own cap."""
    fabric, findings = _run(tmp_path, samples)
    host = fabric.hosts["h1"]
    assert host.nics["eth1"].pcie == PcieLink(16.0, 16, 16.0, 16, False)
    assert host.acs_redirect and "0000:82:00.0" in host.acs_redirect  # ACS on, but not between a GPU and its NIC
    assert findings == []


def test_a_nic_on_half_its_lanes(tmp_path: Path, samples: Path) -> None:
    _, findings = _run(tmp_path, samples, [("1a:00.0", OK_LINK, "LnkSta:\tSpeed 32GT/s (ok), Width x8 (downgraded)")])
    [f] = findings
    assert (f.check, f.severity, f.entities) == ("HOST-PCIE-DOWNGRADED", Severity.ERROR, ("nic:h1:mlx5_0",))
    assert f.evidence["a"]["width"] == 8 and f.evidence["a"]["max_width"] == 16
    assert "lspci -vvv -s 0000:1a:00.0 | grep -E 'LnkCap:|LnkSta:'" in f.fix[0].commands
    assert f.fix[0].device == "h1"


@pytest.mark.parametrize(
    ("status", "severity"),
    [
        ("LnkSta:\tSpeed 16GT/s (downgraded), Width x16 (ok)", Severity.WARNING),  # idle GPUs lower the speed
        ("LnkSta:\tSpeed 32GT/s (ok), Width x4 (downgraded)", Severity.ERROR),  # lost lanes do not come back
    ],
)
def test_a_gpu_below_its_capability(tmp_path: Path, samples: Path, status: str, severity: Severity) -> None:
    _, findings = _run(tmp_path, samples, [("19:00.0", OK_LINK, status)])
    [f] = findings
    assert (f.check, f.severity, f.entities) == ("HOST-PCIE-DOWNGRADED", severity, ("gpu:h1:0",))
    assert any(c.startswith("nvidia-smi -i 0000:19:00.0 --query-gpu=pcie.link") for c in f.fix[0].commands)


def test_nvidia_smi_links_are_compared_with_their_max() -> None:
    """nvidia-smi -q has no "(downgraded)" marker: the current generation/width against the max decide."""
    slow = PcieLink(16.0, 16, 32.0, 16)  # Gen4 of Gen5, downgraded unknown
    fabric = Fabric(hosts={"h": Host("h", {}, gpus={1: Gpu("h", 1, "0000:3b:00.0", pcie=slow)})})
    [f] = check_pcie_downgraded(CheckContext.build(fabric))
    assert f.severity is Severity.WARNING and "when idle" in f.message
    fabric.hosts["h"] = replace(
        fabric.hosts["h"], gpus={1: Gpu("h", 1, "0000:3b:00.0", pcie=PcieLink(32.0, 16, 32.0, 16))}
    )
    assert list(check_pcie_downgraded(CheckContext.build(fabric))) == []


def test_acs_redirect_between_a_gpu_and_its_nic(tmp_path: Path, samples: Path) -> None:
    _, findings = _run(tmp_path, samples, [("17:01.0", ACS_OFF, ACS_ON), ("17:02.0", ACS_OFF, ACS_ON)])
    [f] = findings
    assert (f.check, f.entities) == ("HOST-ACS", ("host:h1",))
    assert f.evidence["a"]["pairs"] == [
        {"gpu": "gpu:h1:0", "nic": "nic:h1:mlx5_0", "relation": "PIX", "bridges": ["0000:17:01.0", "0000:17:02.0"]}
    ]
    commands = f.fix[0].commands
    assert "setpci -v -s 0000:17:01.0 ECAP_ACS+0x6.w=0000" in commands
    assert "setpci -v -s 0000:17:02.0 ECAP_ACS+0x6.w=0000" in commands
    assert not any("82:0" in c for c in commands)  # the NVMe switch's ACS is left alone


def test_acs_on_the_switch_upstream_port_is_not_on_the_peer_path(tmp_path: Path, samples: Path) -> None:
    """Peer traffic turns at the switch's internal bus: the upstream port above both is not crossed."""
    text = (samples / SAMPLE).read_text()
    assert "\n17:00.0 " in text  # another downstream port of the same switch: not between GPU 0 and its NIC
    _, findings = _run(tmp_path, samples, [("17:00.0", ACS_OFF, ACS_ON)])
    assert findings == []


def test_acs_across_the_cpu_is_not_judged(tmp_path: Path, samples: Path) -> None:
    fabric, _ = _run(tmp_path, samples, [("17:01.0", ACS_OFF, ACS_ON)])
    host = fabric.hosts["h1"]
    fabric.hosts["h1"] = replace(host, gpus={0: replace(host.gpus[0], nic_relation="SYS")})
    assert list(check_acs(CheckContext.build(fabric))) == []


def test_a_hostile_bridge_address_never_reaches_setpci() -> None:
    bad = "0000:17:01.0;reboot"
    host = Host(
        "h",
        {},
        gpus={0: Gpu("h", 0, "0000:19:00.0", nic="mlx5_0", nic_relation="PIX")},
        acs_redirect={bad: ("ReqRedir",)},
        pci_parents={"0000:19:00.0": bad, "0000:1a:00.0": "0000:17:02.0"},
    )
    host.nics["eth0"] = Nic("h", "eth0", "mlx5_0", 9000, None, pci_address="0000:1a:00.0")
    [f] = check_acs(CheckContext.build(Fabric(hosts={"h": host})))
    assert not any("reboot" in c and not c.startswith("#") for c in f.fix[0].commands)
    assert safe_bdf(bad) is None and safe_bdf("17:01.0") is None and safe_bdf("0000:17:01.0") == "0000:17:01.0"


def test_pci_path_stops_on_a_cycle() -> None:
    parents = {"a": "x", "x": "y", "y": "x", "b": "z"}
    assert set(pci_path(parents, "a", "b")) == {"x", "y", "z"}
