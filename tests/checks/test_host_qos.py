"""QOS-DCBX and QOS-ETS over real ``mlnx_qos`` captures (ConnectX-4 netarbiter, husky), read by the bundle reader."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fabric_factory import FabricFactory
from host_bundle import write_host

from unifab import layout
from unifab.checks.context import CheckContext
from unifab.checks.host_qos import check_dcbx, check_ets, wanted_dcbx
from unifab.intent import Device, parse_intent, resolve
from unifab.intent_presets import PRESETS
from unifab.model import Fabric, Finding, Severity
from unifab.parse.host import mlnx_qos
from unifab.twin import cluster as twin
from unifab.twin.host_files import nic_mlnx_qos

CX4 = "host/mlnx_qos_os_dcbx_tsa_vendor_cx4.txt"  # OS DCBX, trust dscp, PFC 3, every TC "vendor"
HUSKY = "host/mlnx_qos_os_dcbx_husky_partial.txt"
FW = ("DCBX mode: OS controlled", "DCBX mode: Firmware controlled")
NICS = {f"mlx5_{i}": (f"eth{i}", f"0000:{0x1A + i:02x}:00.0") for i in range(3)}


def _fabric(tmp_path: Path, texts: list[str]) -> Fabric:
    files = {f"{layout.MLNX_QOS_DIR}/eth{i}.txt": text for i, text in enumerate(texts)}
    return write_host(tmp_path / "b", files, {k: v for k, v in NICS.items() if int(k[-1]) < len(texts)})


def _dcbx(fabric: Fabric) -> list[Finding]:
    return list(check_dcbx(CheckContext.build(fabric)))


def test_os_controlled_captures_are_clean(tmp_path: Path, samples: Path) -> None:
    fabric = _fabric(tmp_path, [(samples / CX4).read_text(), (samples / HUSKY).read_text()])
    assert {n.qos.dcbx for n in fabric.hosts["h1"].nics.values() if n.qos} == {"os"}
    assert _dcbx(fabric) == [] and list(check_ets(CheckContext.build(fabric))) == []  # "vendor" TSA is not judged


def test_firmware_dcbx_against_the_fabrics_os_control(tmp_path: Path, samples: Path) -> None:
    cx4 = (samples / CX4).read_text()
    fabric = _fabric(tmp_path, [cx4, cx4, cx4.replace(*FW)])
    [f] = _dcbx(fabric)
    assert (f.check, f.severity, f.entities) == ("QOS-DCBX", Severity.ERROR, ("nic:h1:mlx5_2",))
    assert f.fix[0].commands[0] == "mlnx_qos -i eth2 -d os" and "most NICs" in f.message


def test_the_intent_decides_and_defaults_to_os(tmp_path: Path, samples: Path) -> None:
    cx4 = (samples / CX4).read_text()
    fabric = _fabric(tmp_path, [cx4.replace(*FW), cx4.replace(*FW)])  # every NIC firmware controlled
    assert _dcbx(fabric) == []  # without intent the majority is the baseline
    intent = parse_intent("version: 1\npreset: nvidia-spectrum-x\n")
    fabric.qos_intent = resolve(intent, Device("h1", "host"))
    assert wanted_dcbx(CheckContext.build(fabric)) == "os"
    assert [f.entities for f in _dcbx(fabric)] == [("nic:h1:mlx5_0",), ("nic:h1:mlx5_1",)]
    fabric.qos_intent = resolve(
        parse_intent("version: 1\npreset: nvidia-spectrum-x\nqos: {dcbx: fw}\n"), Device("h1", "host")
    )
    assert _dcbx(fabric) == []
    assert "dcbx" not in PRESETS["nvidia-spectrum-x"]


def test_roce_tc_with_a_zero_ets_share(tmp_path: Path, samples: Path) -> None:
    cx4 = (samples / CX4).read_text()
    broken = cx4.replace("tc: 3 ratelimit: unlimited, tsa: vendor", "tc: 3 ratelimit: unlimited, tsa: ets, bw: 0%")
    fabric = _fabric(tmp_path, [cx4, cx4, broken])
    [f] = check_ets(CheckContext.build(fabric))
    assert (f.check, f.entities) == ("QOS-ETS", ("nic:h1:mlx5_2",))
    assert "TC 3, an ETS class with 0% bandwidth" in f.message
    [command] = f.fix[0].commands
    tsa, bw = command.split("--tsa ")[1].split(" --tcbw ")
    shares = [int(x) for x in bw.split(",")]
    assert set(tsa.split(",")) == {"ets"} and shares[3] == 50 and sum(shares) == 100


def test_cnp_in_a_weighted_class_on_the_nic(tmp_path: Path, samples: Path) -> None:
    """The twin's NIC QoS (ETS 45/1/1/50/1/1/strict/1) is right; CNP priority 6 moved into the ETS TC 0 is not."""
    text = mlnx_qos.dump(nic_mlnx_qos(twin.TwinNic("gpu001", 0)))
    fabric = _fabric(tmp_path, [text])
    nic = fabric.hosts["h1"].nics["eth0"]
    assert nic.qos is not None
    fabric.hosts["h1"].nics["eth0"] = replace(nic, qos=replace(nic.qos, cnp_prio=6))
    assert list(check_ets(CheckContext.build(fabric))) == []
    fabric.hosts["h1"].nics["eth0"] = replace(nic, qos=replace(nic.qos, cnp_prio=6, prio_tc={**nic.qos.prio_tc, 6: 0}))
    [f] = check_ets(CheckContext.build(fabric))
    assert "CNP priority 6 is in TC 0, a weighted ETS class" in f.message
    tsa, bw = f.fix[0].commands[0].split("--tsa ")[1].split(" --tcbw ")
    assert tsa.split(",")[0] == "strict" and bw.split(",")[0] == "0" and sum(map(int, bw.split(","))) == 100


def test_switch_roce_queue_with_weight_zero(make_fabric: FabricFactory) -> None:
    clean = make_fabric(4)
    assert list(check_ets(CheckContext.build(clean))) == []
    port = next(iter(clean.switches["leaf1"].ports.values()))
    assert port.qos is not None
    queues = dict(port.qos.queues)
    queues[3] = replace(queues[3], weight=0)
    fabric = make_fabric(4, port_qos={1: {"queues": queues}})
    [f] = check_ets(CheckContext.build(fabric))
    assert (f.check, f.entities) == ("QOS-ETS", ("port:leaf1:Ethernet8",))
    assert f.fix[0].device == "leaf1"
