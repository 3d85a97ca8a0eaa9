"""SuzieQ gather → bundle → ``unifab check``: the Arista capture set finds exactly the hand-found mismatches.

Capture: ``samples/switch/eos/suzieq_gather_eos/{device,interfaces,lldp}.output`` (SuzieQ's ``eos``
namespace, 2021-06-07): 8 vEOS 4.23.5M (spine01-02, leaf01-04, exit01-02), 1 vQFX 19.4R1.10
(dcedge01) and 5 Ubuntu hosts (server101/102/301/302, firewall01).

Hand analysis (from each EOS host's ``show lldp neighbors detail`` and ``show interfaces``;
cross-checked with the per-host extracts ``eos-4.23.5M_<host>_show_*.json`` and
``junos-qfx-19.4R1.10_dcedge01_show_interface.json``):

EOS↔EOS links seen by LLDP — 16, each seen from both ends (LLDP port id type ``interfaceName``):

====================================  =========  ===========  ==============================
link                                  MTU a / b  bandwidth    forwardingModel a / b
====================================  =========  ===========  ==============================
leaf01:Ethernet1 -- spine01:Ethernet1  1500/1500  0 / 0        routed / routed
leaf02:Ethernet1 -- spine01:Ethernet2  1500/1500  0 / 0        routed / routed
leaf03:Ethernet1 -- spine01:Ethernet3  1500/1500  0 / 0        routed / routed
leaf04:Ethernet1 -- spine01:Ethernet4  1500/1500  0 / 0        routed / routed
exit01:Ethernet1 -- spine01:Ethernet5  1500/1500  0 / 0        routed / routed
exit02:Ethernet1 -- spine01:Ethernet6  1500/1500  0 / 0        routed / routed
leaf01:Ethernet2 -- spine02:Ethernet1  1500/1500  0 / 0        routed / routed
leaf02:Ethernet2 -- spine02:Ethernet2  1500/1500  0 / 0        routed / routed
leaf03:Ethernet2 -- spine02:Ethernet3  1500/1500  0 / 0        routed / routed
leaf04:Ethernet2 -- spine02:Ethernet4  1500/1500  0 / 0        routed / routed
exit01:Ethernet2 -- spine02:Ethernet5  1500/1500  0 / 0        routed / routed
exit02:Ethernet2 -- spine02:Ethernet6  1500/1500  0 / 0        routed / routed
leaf01:Ethernet5 -- leaf02:Ethernet5   9214/9214  0 / 0        dataLink (Port-Channel1) both
leaf01:Ethernet6 -- leaf02:Ethernet6   9214/9214  0 / 0        dataLink (Port-Channel1) both
leaf03:Ethernet5 -- leaf04:Ethernet5   9214/9214  0 / 0        dataLink (Port-Channel1) both
leaf03:Ethernet6 -- leaf04:Ethernet6   9214/9214  0 / 0        dataLink (Port-Channel1) both
====================================  =========  ===========  ==============================

* MTU: both ends agree on all 16 (1500 on the routed spine/leaf/exit links, ``l3MtuConfigured``
  false i.e. the EOS routed default; 9214 on the MLAG peer-link members). No MTU mismatch.
* LLDP ``maxFrameSize`` is 9236 on every EOS↔EOS neighbor: the vEOS L2 maximum frame, not the
  configured MTU; it is not compared with MTU (1500 vs 9236 would be a false mismatch).
* Speed: vEOS reports ``bandwidth: 0`` on every Ethernet port (SuzieQ shows speed -1, unknown), so the
  model's speed is ``None`` on both ends and no speed mismatch can be claimed. No LINK-SPEED finding.
* exit01:Ethernet4 -- dcedge01 xe-0/0/0 and exit02:Ethernet4 -- dcedge01 xe-0/0/1 (Junos, read by the
  Junos reader): EOS 1500 (L3) vs Junos physical 1514 (L2 = 1500 + 14-byte Ethernet header, which the
  reader takes off; the unit ``xe-0/0/N.0`` carries inet MTU 1500) — no MTU mismatch; EOS speed unknown vs
  Junos 10 Gb/s — the ``Speed mismatch`` SuzieQ's ``interface assert`` reports there is an artefact of
  vEOS's unknown speed, not a real mismatch. The EOS end sends the Junos port as LLDP port id
  ``516``/``517`` (subtype ``local``: the SNMP ifIndex; the name ``xe-0/0/0`` is in the port
  description, which the EOS reader takes); the Junos end sees ``Ethernet4``. Both are switch↔switch links.
* Hosts: no EOS LLDP neighbor is a server (they run no lldpd), so there are no NIC links.

So the hand-found set of link-level speed/MTU mismatches is EMPTY, and ``unifab check`` must report
no LINK-SPEED and no QOS-MTU finding. :func:`test_one_mtu_changed_is_the_one_finding` then proves
the check would see one: leaf01:Ethernet1 set to 9214 in its ``show-interfaces.json`` gives exactly
one QOS-MTU finding, on leaf01:Ethernet1 -- spine01:Ethernet1, naming both ends.

No INPUT-* findings are expected: every EOS host has all three replies and a reconstructed
running-config the EOS reader accepts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unifab.checks.context import CheckContext
from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.collect.suzieq_gather import gather_to_bundle, reconstruct_running_config
from unifab.errors import ParseError
from unifab.model import Fabric
from unifab.parse.switch import eos_config

GATHER = "switch/eos/suzieq_gather_eos"
GATHER_FILES = ("device.output", "interfaces.output", "lldp.output")
EOS_HOSTS = ("exit01", "exit02", "leaf01", "leaf02", "leaf03", "leaf04", "spine01", "spine02")
JUNOS_HOST = "dcedge01"  # vQFX: read by the Junos reader (ports and LLDP; no class-of-service)
NOT_IMPORTED = [
    "firewall01 (linux): not imported",
    "server101 (linux): not imported",
    "server102 (linux): not imported",
    "server301 (linux): not imported",
    "server302 (linux): not imported",
]
# (a end, b end, MTU on both ends), counted by hand from the LLDP replies (see the module docstring)
EOS_LINKS = (
    ("leaf01:Ethernet1", "spine01:Ethernet1", 1500),
    ("leaf02:Ethernet1", "spine01:Ethernet2", 1500),
    ("leaf03:Ethernet1", "spine01:Ethernet3", 1500),
    ("leaf04:Ethernet1", "spine01:Ethernet4", 1500),
    ("exit01:Ethernet1", "spine01:Ethernet5", 1500),
    ("exit02:Ethernet1", "spine01:Ethernet6", 1500),
    ("leaf01:Ethernet2", "spine02:Ethernet1", 1500),
    ("leaf02:Ethernet2", "spine02:Ethernet2", 1500),
    ("leaf03:Ethernet2", "spine02:Ethernet3", 1500),
    ("leaf04:Ethernet2", "spine02:Ethernet4", 1500),
    ("exit01:Ethernet2", "spine02:Ethernet5", 1500),
    ("exit02:Ethernet2", "spine02:Ethernet6", 1500),
    ("leaf01:Ethernet5", "leaf02:Ethernet5", 9214),
    ("leaf01:Ethernet6", "leaf02:Ethernet6", 9214),
    ("leaf03:Ethernet5", "leaf04:Ethernet5", 9214),
    ("leaf03:Ethernet6", "leaf04:Ethernet6", 9214),
)
HAND_FOUND_MISMATCHES: set[tuple[str, str]] = set()  # (check, link id): none in this capture


def _link_id(a: str, b: str) -> str:
    return "link:" + "--".join(sorted((a, b)))


def _convert(samples: Path, out: Path) -> list[str]:
    return gather_to_bundle([samples / GATHER / f for f in GATHER_FILES], out)


@pytest.fixture()
def bundle(samples: Path, tmp_path: Path) -> Path:
    out = tmp_path / "bundle"
    assert _convert(samples, out) == NOT_IMPORTED
    return out


def _port_mismatches(fabric: Fabric) -> set[tuple[str, str]]:
    return {
        (f.check, e)
        for f in run_checks(fabric, only={"LINK-SPEED", "QOS-MTU"})
        for e in f.entities
        if e.startswith("link:")
    }


def test_files_written_as_captured(samples: Path, bundle: Path) -> None:
    """One eos/ directory per vEOS host, one junos/ for the vQFX; replies equal the per-host extracts."""
    assert sorted(p.name for p in (bundle / "switches").iterdir()) == sorted([*EOS_HOSTS, JUNOS_HOST])
    junos = bundle / "switches" / JUNOS_HOST / "junos"
    assert sorted(p.name for p in junos.iterdir()) == ["show-interfaces.json", "show-lldp-neighbors-detail.json"]
    for extract, written in (
        ("show_interface", "show-interfaces.json"),
        ("show_lldp_neighbors_detail", "show-lldp-neighbors-detail.json"),
    ):
        expected = (samples / f"switch/junos/junos-qfx-19.4R1.10_{JUNOS_HOST}_{extract}.json").read_bytes()
        assert (junos / written).read_bytes() == expected
    for host in EOS_HOSTS:
        eos = bundle / "switches" / host / "eos"
        assert sorted(p.name for p in eos.iterdir()) == [
            "running-config.txt",
            "show-interfaces.json",
            "show-lldp-neighbors-detail.json",
            "show-version.json",
        ]
    for host in ("exit01", "leaf01", "spine01"):
        eos = bundle / "switches" / host / "eos"
        for extract, written in (
            ("show_interfaces", "show-interfaces.json"),
            ("show_lldp_neighbors_detail", "show-lldp-neighbors-detail.json"),
        ):
            expected = json.loads((samples / f"switch/eos/eos-4.23.5M_{host}_{extract}.json").read_text())
            assert json.loads((eos / written).read_text()) == expected
    version = json.loads((bundle / "switches/leaf01/eos/show-version.json").read_text())
    assert (version["modelName"], version["version"]) == ("vEOS", "4.23.5M")


def test_reconstructed_running_config(bundle: Path) -> None:
    """hostname + one stanza per interface; `no switchport` on routed ports; `mtu` only where configured."""
    text = (bundle / "switches/leaf01/eos/running-config.txt").read_text()
    cfg = eos_config.parse(text, "leaf01")
    assert cfg.hostname == "leaf01"
    stanzas = [line.removeprefix("interface ") for line in text.splitlines() if line.startswith("interface ")]
    assert stanzas == [
        "Ethernet1",
        "Ethernet2",
        "Ethernet3",
        "Ethernet4",
        "Ethernet5",
        "Ethernet6",
        "Loopback0",
        "Loopback1",
        "Management1",
        "Port-Channel1",
        "Port-Channel3",
        "Port-Channel4",
        "Vlan10",
        "Vlan30",
        "Vlan1006",
        "Vlan4094",
        "Vxlan1",
    ]
    # l3MtuConfigured is true only on Port-Channel3/4 (9214) and Vlan10/30 (9164) of leaf01
    assert {n: i.mtu for n, i in cfg.interfaces.items() if i.mtu is not None} == {
        "Port-Channel3": 9214,
        "Port-Channel4": 9214,
        "Vlan10": 9164,
        "Vlan30": 9164,
    }
    routed = {n for n, q in cfg.interface_qos.items() if q.routed}
    assert routed == {"Ethernet1", "Ethernet2"}
    exit01 = eos_config.parse((bundle / "switches/exit01/eos/running-config.txt").read_text(), "exit01")
    # subinterfaces get a stanza but no `no switchport` (EOS takes them as routed anyway)
    assert {"Ethernet3.2", "Ethernet3.3", "Ethernet3.4"} <= set(exit01.interfaces)


def test_capture_checks_match_hand_analysis(bundle: Path) -> None:
    fabric = load_bundle(bundle)
    assert sorted(fabric.switches) == sorted([*EOS_HOSTS, JUNOS_HOST])
    assert {sw.version for name, sw in fabric.switches.items() if name != JUNOS_HOST} == {"4.23.5M"}
    qfx = fabric.switches[JUNOS_HOST]
    assert qfx.os == "junos"
    # the vQFX's front-panel ports: xe-0/0/0..11 at 10G, media MTU 1514 read as IP MTU 1500; QoS not read
    assert sorted(qfx.ports, key=lambda n: int(n.rsplit("/", 1)[1])) == [f"xe-0/0/{i}" for i in range(12)]
    assert {(p.mtu, p.speed_mbps, p.admin_status, p.qos) for p in qfx.ports.values()} == {(1500, 10_000, "up", None)}
    # (a) every EOS<->EOS LLDP link is in the fabric, and they are exactly its switch<->switch links
    link_ids = {lk.id for lk in fabric.links}
    expected = {_link_id(a, b) for a, b, _ in EOS_LINKS}
    assert len(expected) == 16
    assert expected <= link_ids
    # the two exit<->dcedge01 links, seen from both ends (the EOS end names the Junos port by its description,
    # not the ifIndex Junos sends as its port id; the Junos end sees the EOS interface name), are
    # switch<->switch links too: MTU 1500 on both ends, speed unknown on the vEOS end
    qfx_links = {"link:dcedge01:xe-0/0/0--exit01:Ethernet4", "link:dcedge01:xe-0/0/1--exit02:Ethernet4"}
    assert link_ids - expected == qfx_links
    assert all(lk.sources == {"lldp"} for lk in fabric.links if lk.id in qfx_links)
    ctx = CheckContext.build(fabric)
    assert {pl.link.id for pl in ctx.port_links} == expected | qfx_links
    for a, b, mtu in EOS_LINKS:
        for end in (a, b):
            switch, port_name = end.split(":")
            port = fabric.switches[switch].ports[port_name]
            assert (port.mtu, port.speed_mbps) == (mtu, None), end
    # (b) LINK-SPEED / QOS-MTU findings are exactly the hand-found set: none
    assert _port_mismatches(fabric) == HAND_FOUND_MISMATCHES
    assert [f for f in run_checks(fabric) if f.check in {"LINK-SPEED", "QOS-MTU"}] == []
    # (c) no input findings
    assert [f for f in run_checks(fabric) if f.check.startswith("INPUT-")] == []


def test_one_mtu_changed_is_the_one_finding(bundle: Path) -> None:
    """leaf01:Ethernet1 at 9214 in show-interfaces.json (its end to spine01 stays 1500): one QOS-MTU finding."""
    path = bundle / "switches/leaf01/eos/show-interfaces.json"
    doc = json.loads(path.read_text())
    assert doc["interfaces"]["Ethernet1"]["mtu"] == 1500
    doc["interfaces"]["Ethernet1"]["mtu"] = 9214
    path.write_text(json.dumps(doc))
    fabric = load_bundle(bundle)
    findings = [f for f in run_checks(fabric) if f.check in {"LINK-SPEED", "QOS-MTU"}]
    assert len(findings) == 1
    f = findings[0]
    link = "link:leaf01:Ethernet1--spine01:Ethernet1"
    assert f.check == "QOS-MTU"
    assert f.entities == (link,)
    assert {f.subject["a"], f.subject["b"]} == {"leaf01:Ethernet1", "spine01:Ethernet1"}
    assert "leaf01:Ethernet1" in f.message and "spine01:Ethernet1" in f.message
    assert "9214" in f.message and "1500" in f.message
    assert [f for f in run_checks(fabric) if f.check.startswith("INPUT-")] == []


def _record(host: str, devtype: str, cmd: str, data: object, status: int = 200) -> dict[str, object]:
    return {"hostname": host, "devtype": devtype, "cmd": cmd, "status": status, "data": data, "namespace": "t"}


def test_missing_and_failed_commands_are_noted(tmp_path: Path) -> None:
    """A host without some replies still gets a config the reader accepts; later files replace earlier ones."""
    iface = {"interfaces": {"Ethernet1": {"mtu": 9000, "l3MtuConfigured": True, "forwardingModel": "routed"}}}
    first = [
        _record("sw1", "eos", "show interfaces", {"interfaces": {}}),
        _record("sw1", "eos", "show version", {}, status=500),
        _record("srv", "linux", "ip -d address show", "1: lo ..."),
    ]
    second = [_record("sw1", "eos", "show interfaces | json", json.dumps(iface))]
    (tmp_path / "a.output").write_text(json.dumps(first))
    (tmp_path / "b.output").write_text(json.dumps(second))
    out = tmp_path / "bundle"
    notes = gather_to_bundle([tmp_path / "a.output", tmp_path / "b.output"], out)
    assert notes == [
        "srv (linux): not imported",
        "sw1 (eos): 'show lldp neighbors detail' not in the gather; show-lldp-neighbors-detail.json not written",
        "sw1 (eos): 'show version' failed in the gather; show-version.json not written",
    ]
    eos = out / "switches/sw1/eos"
    assert sorted(p.name for p in eos.iterdir()) == ["running-config.txt", "show-interfaces.json"]
    assert json.loads((eos / "show-interfaces.json").read_text()) == iface
    fabric = load_bundle(out)
    assert fabric.input_findings == []
    port = fabric.switches["sw1"].ports["Ethernet1"]
    assert port.mtu == 9000


def test_bad_gather_raises(tmp_path: Path) -> None:
    bad = tmp_path / "bad.output"
    bad.write_text(json.dumps([_record("sw1", "eos", "show interfaces", {"interfaces": []})]))
    with pytest.raises(ParseError):
        gather_to_bundle([bad], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(ParseError):
        reconstruct_running_config("sw1", [], "x")


def test_a_junos_mtu_change_is_found_and_fixed_in_junos(bundle: Path) -> None:
    """dcedge01 xe-0/0/0 at media MTU 1200 (IP 1186) against exit01's 1500: one QOS-MTU finding on that link,
    fixed on the Junos end in Junos: the media MTU (1500 + 14) set and committed."""
    path = bundle / "switches" / JUNOS_HOST / "junos" / "show-interfaces.json"
    doc = json.loads(path.read_text())
    [port] = [p for p in doc["interface-information"][0]["physical-interface"] if p["name"][0]["data"] == "xe-0/0/0"]
    assert port["mtu"] == [{"data": "1514"}]
    port["mtu"] = [{"data": "1200"}]
    path.write_text(json.dumps(doc))
    fabric = load_bundle(bundle)
    assert fabric.switches[JUNOS_HOST].ports["xe-0/0/0"].mtu == 1186
    [finding] = [f for f in run_checks(fabric) if f.check in {"LINK-SPEED", "QOS-MTU"}]
    assert finding.entities == ("link:dcedge01:xe-0/0/0--exit01:Ethernet4",)
    assert [(x.device, x.commands) for x in finding.fix] == [
        (JUNOS_HOST, ("configure", "set interfaces xe-0/0/0 mtu 1514", "commit and-quit"))
    ]
