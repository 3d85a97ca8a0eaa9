"""The twin on Arista EOS and Cumulus NVUE switches: clean bundles read without findings and with the
same per-port values as the SONiC twin, and every twin port setting survives the vendor's format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.errors import UsageError
from unifab.intent import Device, parse_intent, resolve
from unifab.model import Fabric
from unifab.parse.host import lldpcli
from unifab.parse.switch import eos_config, eos_json, nvue
from unifab.profile import PortSpec
from unifab.render.nvue_config import render_nvue_yaml
from unifab.twin.cluster import CNP_PRIO, ROCE_DSCP, ROCE_PRIO, build, port_name
from unifab.twin.generate import generate
from unifab.twin.writer import write_bundle

GPUS = 64  # 8 hosts: 8 leaves, 8 spines, 64 host links and 64 uplinks


def _front_panel(name: str) -> str:
    """The port's SONiC name, so ports compare across OSes (Cumulus ``swp<n>`` is SONiC ``Ethernet<8(n-1)>``)."""
    return port_name(int(name.removeprefix("swp")) - 1) if name.startswith("swp") else name


def _port_values(fabric: Fabric) -> dict[tuple[str, str], tuple[Any, ...]]:
    out = {}
    for sw in fabric.switches.values():
        for port in sw.ports.values():
            q = port.qos
            assert q is not None, port.id
            out[(sw.name, _front_panel(port.name))] = (
                port.mtu,
                port.speed_mbps,
                q.pfc_enabled,
                q.dscp_to_tc.get(ROCE_DSCP),
                q.queues[ROCE_PRIO].ecn_enabled,
                q.queues[CNP_PRIO].scheduler_type == "STRICT",
            )
    return out


@pytest.fixture(scope="module")
def clean_twin(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``clean_twin(switch_os)``: the clean 64-GPU twin (seed 1) on that OS, generated once per module.
    Tests only read it."""
    made: dict[str, Path] = {}

    def get(switch_os: str) -> Path:
        if switch_os not in made:
            out = tmp_path_factory.mktemp(switch_os) / "b"
            generate(out, gpus=GPUS, seed=1, switch_os=switch_os)
            made[switch_os] = out
        return made[switch_os]

    return get


@pytest.fixture(scope="module")
def sonic_values(clean_twin: Callable[[str], Path]) -> dict[tuple[str, str], tuple[Any, ...]]:
    return _port_values(load_bundle(clean_twin("sonic")))


@pytest.mark.parametrize("switch_os", ["eos", "nvue", "mixed"])
def test_clean_twin_has_no_findings_and_sonic_values(
    clean_twin: Callable[[str], Path], switch_os: str, sonic_values: dict[tuple[str, str], tuple[Any, ...]]
) -> None:
    fabric = load_bundle(clean_twin(switch_os))
    assert fabric.input_findings == []
    assert run_checks(fabric) == []
    expected_os = {"sonic", "eos", "nvue"} if switch_os == "mixed" else {switch_os}
    assert {sw.os for sw in fabric.switches.values()} == expected_os
    assert _port_values(fabric) == sonic_values
    assert sonic_values[("leaf-su1-r0", "Ethernet0")] == (9100, 400_000, {3}, 3, True, True)
    # 64 host links and 64 uplinks; the switches' LLDP and the hosts' LLDP name the same cables as the plan
    assert len(fabric.links) == 128
    assert all(lk.sources == {"lldp", "plan"} for lk in fabric.links if lk.a.node.startswith("gpu"))
    if switch_os != "mixed":
        assert all("lldp" in lk.sources for lk in fabric.links)


def test_mixed_cycles_os_by_index() -> None:
    cluster = build(GPUS, switch_os="mixed")
    oses = {name: sw.os for name, sw in cluster.switches.items()}
    assert [oses[f"leaf-su1-r{r}"] for r in range(8)] == ["sonic", "eos", "nvue"] * 2 + ["sonic", "eos"]
    assert [oses[f"spine{j:02d}"] for j in range(1, 9)] == ["sonic", "eos", "nvue"] * 2 + ["sonic", "eos"]
    assert {sw.os for sw in build(GPUS).switches.values()} == {"sonic"}


def test_unknown_switch_os_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="sonic, eos, nvue, mixed"):
        generate(tmp_path / "b", gpus=GPUS, switch_os="junos")


def test_files_are_the_vendors_formats(tmp_path: Path) -> None:
    """Every switch file parses with the parser for real device output (EOS leaves, NVUE spines)."""
    cluster = build(GPUS, switch_os="eos")
    for sw in cluster.switches.values():
        if sw.role == "spine":  # NVUE spines: their ports are swp<n>, also as the EOS leaves' peers
            sw.os = "nvue"
            renamed = {}
            for i, port in enumerate(sw.ports.values()):
                port.name = port_name(i, "nvue")
                cluster.switches[port.peer_node].ports[port.peer_port].peer_port = port.name
                renamed[port.name] = port
            sw.ports = renamed
    write_bundle(cluster, tmp_path)
    leaf = tmp_path / "switches" / "leaf-su1-r0"
    assert sorted(p.name for p in (leaf / "eos").iterdir()) == [
        "running-config.txt",
        "show-interfaces.json",
        "show-lldp-neighbors-detail.json",
        "show-version.json",
    ]
    cfg = eos_config.parse((leaf / "eos" / "running-config.txt").read_text(), "running-config.txt")
    assert cfg.hostname == "leaf-su1-r0" and len(cfg.interface_qos) == 16
    assert eos_config.DEFAULT_QUEUE_STRICT  # tx-queue 7 is left unconfigured on that assumption
    oper = eos_json.parse((leaf / "eos" / "show-interfaces.json").read_text(), "show-interfaces.json").data
    assert isinstance(oper, eos_json.EosInterfaces) and oper.interfaces["Ethernet0"].speed_mbps == 400_000
    version = eos_json.parse_show_version((leaf / "eos" / "show-version.json").read_text())
    assert version.model_name == "DCS-7060X6-64PE"
    lldp = eos_json.parse_lldp_neighbors_detail((leaf / "eos" / "show-lldp-neighbors-detail.json").read_text())
    [host] = lldp.interfaces["Ethernet0"]
    assert (host.system_name, host.port_id_type, host.port_description) == ("gpu001", "macAddress", "eth0")
    spine = tmp_path / "switches" / "spine01" / "nvue"
    assert sorted(p.name for p in spine.iterdir()) == ["config.yaml", "lldpcli.json"]
    ncfg = nvue.parse((spine / "config.yaml").read_text(), "config.yaml")
    assert ncfg.hostname == "spine01" and len(ncfg.interfaces) == 8
    neighbors = lldpcli.parse((spine / "lldpcli.json").read_text(), "lldpcli.json")
    assert {(n.system_name, n.port_id) for n in neighbors} >= {("leaf-su1-r0", "Ethernet256")}


@pytest.mark.parametrize("switch_os", ["eos", "nvue"])
def test_every_port_setting_is_encoded(tmp_path: Path, switch_os: str) -> None:
    """The twin fields scenarios change reach the model through the vendor's files."""
    cluster = build(GPUS, switch_os=switch_os)
    leaf, other = cluster.switches["leaf-su1-r0"], cluster.switches["leaf-su1-r1"]
    leaf.dscp_to_tc[ROCE_DSCP] = 1  # dscp-lossy
    leaf.ecn_min_bytes, leaf.ecn_max_bytes = leaf.ecn_max_bytes, leaf.ecn_min_bytes  # ecn-thresh
    ports = {i: leaf.ports[port_name(i, switch_os)] for i in (0, 1, 2, 3, 4, 5, 6, 7, 32)}
    ports[0].pfc = {3, 4}
    ports[1].pfc = set()
    ports[2].trusts_dscp = False
    ports[3].roce_queue_ecn = False
    ports[4].cnp_queue_strict = False
    ports[5].pfcwd = False
    ports[6].mtu = 1500
    ports[7].configured_cable_m = 1
    ports[32].speed_mbps = 200_000
    write_bundle(cluster, tmp_path)
    fabric = load_bundle(tmp_path)
    assert fabric.input_findings == []
    sw = fabric.switches["leaf-su1-r0"]
    q = {name: port.qos for name, port in sw.ports.items()}
    assert all(v is not None for v in q.values())
    q0, q8, q16, q24, q32, q40 = (q[ports[i].name] for i in range(6))
    assert q0 is not None and q8 is not None and q16 is not None
    assert q24 is not None and q32 is not None and q40 is not None
    assert q0.dscp_to_tc[ROCE_DSCP] == 1
    roce = q0.queues[ROCE_PRIO]
    assert (roce.ecn_min_bytes, roce.ecn_max_bytes) == (1_500_000, 150_000)
    assert q0.pfc_enabled == {3, 4} and q8.pfc_enabled == frozenset()
    assert (q16.trust, q16.dscp_to_tc) == ("pcp", {})
    assert not q24.queues[ROCE_PRIO].ecn_enabled
    assert q32.queues[CNP_PRIO].scheduler_type == "DWRR"
    assert q40.pfcwd is None and q40.pfcwd_priorities == frozenset()
    assert q0.pfcwd is not None and q0.pfcwd.detection_ms == 200 and q0.pfcwd_priorities == {3, 4}
    assert sw.ports[ports[6].name].mtu == 1500
    assert sw.ports[ports[32].name].speed_mbps == 200_000
    cable = q[ports[7].name]
    assert cable is not None
    # EOS has no cable length; NVUE carries it in the PFC profile
    assert cable.cable_len_m == (1 if switch_os == "nvue" else None)
    untouched = fabric.switches[other.name].ports[port_name(0, switch_os)].qos
    assert untouched is not None and untouched.dscp_to_tc[ROCE_DSCP] == 3
    assert untouched.queues[ROCE_PRIO].ecn_min_bytes == 150_000


def test_nvue_twin_ports_render_and_parse_back(clean_twin: Callable[[str], Path]) -> None:
    """NVUE twin ports are Cumulus ``swp<n>`` names, so the NVUE renderer takes them and its YAML reads back."""
    bundle = clean_twin("nvue")
    path = bundle / "switches" / "leaf-su1-r0" / "nvue" / "config.yaml"
    current = path.read_text()
    cfg = nvue.parse(current, str(path))
    host_lldp = lldpcli.parse((bundle / "hosts" / "gpu003" / "cmd" / "lldpcli.json").read_text(), "lldp")
    leaf_ends = {(n.local_port, n.system_name, n.port_id) for n in host_lldp}
    assert ("eth0", "leaf-su1-r0", "swp3") in leaf_ends and all(n.system_descr.startswith("Cumulus") for n in host_lldp)
    hosts, uplinks = [f"swp{n}" for n in range(1, 9)], [f"swp{n}" for n in range(33, 41)]  # 8 hosts, 8 spines
    assert sorted(cfg.interfaces, key=lambda n: int(n[3:])) == hosts + uplinks
    profile = resolve(parse_intent((bundle / "fabric.yaml").read_text()), Device("leaf-su1-r0", "leaf"))
    specs = [
        PortSpec(name, q.speed_mbps or 0, *(("host", 3) if name in hosts else ("fabric", 30)))
        for name, q in cfg.interfaces.items()
    ]
    back = nvue.parse(render_nvue_yaml(specs, profile, current), "rendered config.yaml")
    assert set(back.interfaces) == set(cfg.interfaces)
    for q in back.interfaces.values():
        assert (q.pfc_enabled, q.dscp_to_tc[ROCE_DSCP], q.mtu, q.pfcwd) == ({ROCE_PRIO}, ROCE_PRIO, 9100, True)
        assert q.schedulers[CNP_PRIO].mode == "strict" and q.ecn[ROCE_PRIO].enabled
