"""NX-OS, Junos and Cumulus parsers read past a bad entry of a real capture: that entry is the cost, the problem
names its line (text) or key path (JSON), every other entry reads as in the unharmed file, and the strict parse
still raises."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.switch import cumulus, junos, nxos

DATA = Path(__file__).resolve().parents[2] / "data"


def _lenient(parser: Callable[..., Any], text: str) -> tuple[Any, ParseProblems]:
    log = ParseProblems("sample")
    return parser(text, "sample", log), log


def _check(parser: Callable[..., Any], broken: str, whole: tuple[Any, ...], lost: set[str]) -> ParseProblems:
    with pytest.raises(ParseError):
        parser(broken)
    got, log = _lenient(parser, broken)
    assert len(log.problems) == 1, [str(p) for p in log.problems]

    def key(x: Any) -> str:
        return str(getattr(x, "name", None) or getattr(x, "local_port", ""))

    assert got == tuple(x for x in whole if key(x) not in lost)
    assert len(got) == len(whole) - len(lost) > 0
    return log


def test_nxos_lldp_json_bad_row() -> None:
    doc = json.loads((DATA / "samples/switch/nxos/nxos-9.3.4_leaf01_show_lldp_neighbors_json.json").read_text())
    whole = nxos.parse_lldp_json(json.dumps(doc))
    doc["TABLE_nbor"]["ROW_nbor"][1]["port_id"] = ["Ethernet1/1"]
    log = _check(nxos.parse_lldp_json, json.dumps(doc), whole, {whole[1].local_port})
    assert log.problems[0].key == "TABLE_nbor.ROW_nbor[1].port_id"


def test_nxos_interface_brief_json_bad_row() -> None:
    doc = json.loads((DATA / "samples/switch/nxos/nxos-9.3.4_leaf01_show_interface_brief_json.json").read_text())
    whole = nxos.parse_interfaces_json(json.dumps(doc))
    doc["TABLE_interface"]["ROW_interface"][1]["speed"] = "fast"
    log = _check(nxos.parse_interfaces_json, json.dumps(doc), whole, {"Ethernet1/1"})
    assert log.problems[0].key is not None and "ROW_interface[1]" in log.problems[0].key


def test_nxos_show_interface_text_bad_header_costs_that_interface() -> None:
    text = (DATA / "samples/switch/nxos/nxos-9.3.4_leaf01_show_interface_egrep.txt").read_text()
    whole = nxos.parse_interfaces_text(text)
    lines = text.split("\n")
    i = lines.index("Ethernet1/2 is up")
    lines[i] = "Ethernet1/2 is sort of up"
    log = _check(nxos.parse_interfaces_text, "\n".join(lines), whole, {"Ethernet1/2"})
    assert log.problems[0].line == i + 1


def test_nxos_lldp_text_block_without_local_port() -> None:
    text = (DATA / "samples/switch/nxos/ntc_cisco_nxos_show_lldp_neighbors_detail.raw").read_text()
    whole = nxos.parse_lldp_text(text)
    lines = text.split("\n")
    locals_ = [n for n, line in enumerate(lines) if line.startswith("Local Port id:")]
    if len(locals_) < 2:
        pytest.fail("expected several neighbours in the capture")
    del lines[locals_[1]]
    log = _check(nxos.parse_lldp_text, "\n".join(lines), whole, {whole[1].local_port})
    assert "Local Port id" in log.problems[0].expected


def test_junos_interfaces_json_bad_physical_costs_it_and_its_units() -> None:
    doc = json.loads((DATA / "samples/switch/junos/junos-qfx-19.4R1.10_dcedge01_show_interface.json").read_text())
    whole = junos.parse_interfaces_json(json.dumps(doc))
    phys = doc["interface-information"][0]["physical-interface"][1]
    name = phys["name"][0]["data"]
    units = {u["name"][0]["data"] for u in phys.get("logical-interface", [])}
    phys["mtu"] = [{"data": "big"}]
    log = _check(junos.parse_interfaces_json, json.dumps(doc), whole, {name, *units})
    assert log.problems[0].key is not None and "physical-interface[1]" in log.problems[0].key


def test_junos_lldp_json_bad_neighbour() -> None:
    rel = "samples/switch/junos/junos-qfx-19.4R1.10_leaf01_show_lldp_neighbors_detail.json"
    doc = json.loads((DATA / rel).read_text())
    whole = junos.parse_lldp_json(json.dumps(doc))
    entry = doc["lldp-neighbors-information"][0]["lldp-neighbor-information"][1]
    entry["lldp-local-interface"] = [{"data": {"nested": 1}}]
    entry.pop("lldp-local-port-id", None)
    with pytest.raises(ParseError):
        junos.parse_lldp_json(json.dumps(doc))
    got, log = _lenient(junos.parse_lldp_json, json.dumps(doc))
    (problem,) = log.problems
    assert problem.key is not None and "lldp-neighbor-information[1]" in problem.key
    assert got == whole[:1] + whole[2:]


def test_junos_lldp_text_bad_row() -> None:
    text = (DATA / "samples/switch/junos/ntc_juniper_junos_show_lldp_neighbors.raw").read_text()
    whole = junos.parse_lldp_text(text)
    lines = text.split("\n")
    lines[2] = "ge-0/0/0"
    log = _check(junos.parse_lldp_text, "\n".join(lines), whole, {whole[1].local_port})
    assert log.problems[0].line == 3


def test_junos_interfaces_text_bad_physical_header() -> None:
    text = (DATA / "samples/switch/junos/ntc_juniper_junos_show_interfaces.raw").read_text()
    whole = junos.parse_interfaces_text(text)
    lines = text.split("\n")
    heads = [n for n, line in enumerate(lines) if line.startswith("Physical interface:")]
    if len(heads) < 2:
        pytest.fail("expected several physical interfaces")
    i, nxt = heads[1], heads[2] if len(heads) > 2 else len(lines)
    name = lines[i].split()[2].rstrip(",")
    units = {line.split()[2] for line in lines[i:nxt] if line.strip().startswith("Logical interface ")}
    lines[i] = lines[i].replace("Enabled", "Half enabled", 1).replace("Administratively down", "Half enabled", 1)
    log = _check(junos.parse_interfaces_text, "\n".join(lines), whole, {name, *units})
    assert log.problems[0].line == i + 1


def test_cumulus_lldp_json_bad_neighbour() -> None:
    text = (DATA / "samples/switch/nvue/cumulus-4.3.0_leaf01_net_show_lldp_json.json").read_text()
    doc = json.loads(text)
    whole = cumulus.parse_lldp_json(text)
    doc["lldp"][0]["interface"][1]["port"][0]["ttl"] = [{"value": "forever"}]
    broken = json.dumps(doc)
    with pytest.raises(ParseError):
        cumulus.parse_lldp_json(broken)
    got, log = _lenient(cumulus.parse_lldp_json, broken)
    (problem,) = log.problems
    assert problem.key is not None and problem.key.startswith("lldp[0].interface[1]")
    assert got == whole[:1] + whole[2:]


def test_cumulus_vtysh_bad_header_costs_that_interface() -> None:
    rel = "samples/switch/nvue/cumulus-4.3.0_leaf01_vtysh_show_int_vrf_all__ip_-d_address_show.txt"
    text = (DATA / rel).read_text()
    lines = text.split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith("Interface swp"))
    name = lines[i].split()[1]
    zebra_only = "\n".join(lines[: next(n for n, line in enumerate(lines) if line[:1].isdigit())])
    whole = cumulus.parse_vtysh_interfaces(zebra_only)
    lines[i] = f"Interface {name} is sideways"
    broken = "\n".join(lines[: len(zebra_only.split("\n"))])
    log = _check(cumulus.parse_vtysh_interfaces, broken, whole, {name})
    assert log.problems[0].line == i + 1


def test_nvue_bad_interface_key_costs_its_interfaces() -> None:
    """No real ``nv config show -o yaml`` capture exists (tests/parse/switch/test_nvue.py): the RoCE leaf
    configuration reconstructed from the NVUE docs stands in. A dangling profile on one port range and a bad MTU
    on another each cost those ports only."""
    from unifab.parse.switch import nvue

    text = (Path(__file__).parent / "golden" / "nvue_roce_leaf_reconstructed.yaml").read_text()
    whole = nvue.parse(text)
    broken = text.replace(
        "          mtu: 9216\n          speed: 400G\n", "          mtu: jumbo\n          speed: 400G\n", 1
    )
    assert broken != text
    with pytest.raises(ParseError):
        nvue.parse(broken)
    log = ParseProblems("sample")
    got = nvue.parse(broken, "sample", log)
    lost = {f"swp{n}" for n in range(1, 33)}
    (problem,) = log.problems  # one problem for the key, naming every port it cost
    assert problem.key == "interface.swp1-32.link.mtu" and problem.skipped == "interfaces " + ", ".join(
        f"swp{n}" for n in range(1, 33)
    )
    assert set(got.interfaces) == set(whole.interfaces) - lost and len(got.interfaces) > 0
    assert all(got.interfaces[n] == whole.interfaces[n] for n in got.interfaces)
    assert dataclasses.replace(got, interfaces=whole.interfaces) == whole
