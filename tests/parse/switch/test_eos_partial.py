"""EOS parsers read past a bad entry: one corrupted interface, status row or neighbour of a real capture costs
that entry only, the problem names its line (CLI text) or key (eAPI JSON), and the strict parse still raises."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError, ParseProblems
from unifab.parse.switch import eos_cli_text, eos_json

DATA = Path(__file__).resolve().parents[2] / "data"


def _lenient(parser: Callable[..., Any], text: str) -> tuple[Any, ParseProblems]:
    log = ParseProblems("sample")
    return parser(text, "sample", log), log


def _replace_line(text: str, pattern: str, edit: Callable[[str], str]) -> tuple[str, int]:
    lines = text.split("\n")
    i = next(i for i, line in enumerate(lines) if re.search(pattern, line))
    lines[i] = edit(lines[i])
    return "\n".join(lines), i + 1


@pytest.mark.parametrize(
    "rel",
    ["samples/switch/eos/ntc_arista_eos_show_interfaces.raw", "wild/switch/eos/ntc_arista_eos_show_interfaces2.raw"],
)
def test_show_interfaces_bad_detail_costs_that_interface(rel: str) -> None:
    text = (DATA / rel).read_text()
    whole = eos_cli_text.parse_show_interfaces(text)
    second = whole[1].name
    # the MTU line of the second interface
    start = text.split("\n").index(next(line for line in text.split("\n") if line.startswith(f"{second} is ")))
    lines = text.split("\n")
    i = next(j for j in range(start, len(lines)) if " MTU " in lines[j])
    lines[i] = "  IP MTU lots bytes"
    broken = "\n".join(lines)
    with pytest.raises(ParseError) as strict:
        eos_cli_text.parse_show_interfaces(broken)
    assert strict.value.line == i + 1
    got, log = _lenient(eos_cli_text.parse_show_interfaces, broken)
    (problem,) = log.problems
    assert problem.line == i + 1 and second in problem.skipped
    assert got == tuple(x for x in whole if x.name != second)


def test_show_interfaces_bad_header_costs_that_interface() -> None:
    text = (DATA / "samples/switch/eos/ntc_arista_eos_show_interfaces.raw").read_text()
    whole = eos_cli_text.parse_show_interfaces(text)
    broken, line = _replace_line(text, r"^Ethernet2 is ", lambda s: "Ethernet2 is sort of up")
    got, log = _lenient(eos_cli_text.parse_show_interfaces, broken)
    assert [p.line for p in log.problems] == [line]
    assert got == tuple(x for x in whole if x.name != "Ethernet2")


@pytest.mark.parametrize(
    ("parser", "rel", "pattern", "edit"),
    [
        (
            eos_cli_text.parse_show_interfaces_status,
            "samples/switch/eos/ntc_arista_eos_show_interfaces_status.raw",
            r"^Et3/2/1 ",
            lambda s: s.replace("a-10G", "fast!"),
        ),
        (
            eos_cli_text.parse_lldp_neighbors,
            "samples/switch/eos/ntc_arista_eos_show_lldp_neighbors.raw",
            r"^Et3/1 ",
            lambda s: s.replace("120", "long"),
        ),
    ],
)
def test_table_bad_row_costs_that_row(parser: Callable[..., Any], rel: str, pattern: str, edit: Any) -> None:
    text = (DATA / rel).read_text()
    broken, line = _replace_line(text, pattern, edit)
    with pytest.raises(ParseError) as strict:
        parser(broken)
    assert strict.value.line == line
    got, log = _lenient(parser, broken)
    (problem,) = log.problems
    assert problem.line == line
    dropped = "\n".join(x for n, x in enumerate(text.split("\n"), start=1) if n != line)
    assert got == parser(dropped) and len(got) == len(parser(text)) - 1


@pytest.mark.parametrize(
    "rel",
    ["samples/switch/eos/eos_show_interfaces_vEOS.json", "samples/switch/eos/eos-4.23.5M_leaf01_show_interfaces.json"],
)
def test_eapi_show_interfaces_bad_entry_costs_that_interface(rel: str) -> None:
    doc = json.loads((DATA / rel).read_text())
    whole = eos_json.parse_show_interfaces(json.dumps(doc))
    name = sorted(doc["interfaces"])[1]
    doc["interfaces"][name]["mtu"] = "jumbo"
    broken = json.dumps(doc)
    with pytest.raises(ParseError):
        eos_json.parse_show_interfaces(broken)
    got, log = _lenient(eos_json.parse_show_interfaces, broken)
    (problem,) = log.problems
    assert problem.key is not None and name in problem.key and "mtu" in problem.key
    assert got.interfaces == {k: v for k, v in whole.interfaces.items() if k != name}


@pytest.mark.parametrize(
    "rel",
    [
        "samples/switch/eos/eos_show_lldp_neighbors_detail.json",
        "samples/switch/eos/eos-4.23.5M_spine01_show_lldp_neighbors_detail.json",
    ],
)
def test_eapi_lldp_bad_neighbour_costs_that_neighbour(rel: str) -> None:
    doc = json.loads((DATA / rel).read_text())
    whole = eos_json.parse_lldp_neighbors_detail(json.dumps(doc))
    local = next(k for k, v in sorted(doc["lldpNeighbors"].items()) if v.get("lldpNeighborInfo"))
    doc["lldpNeighbors"][local]["lldpNeighborInfo"][0]["ttl"] = "two minutes"
    broken = json.dumps(doc)
    with pytest.raises(ParseError):
        eos_json.parse_lldp_neighbors_detail(broken)
    got, log = _lenient(eos_json.parse_lldp_neighbors_detail, broken)
    (problem,) = log.problems
    assert problem.key is not None and local in problem.key and "ttl" in problem.key
    assert got.interfaces[local] == whole.interfaces[local][1:]
    assert {k: v for k, v in got.interfaces.items() if k != local} == {
        k: v for k, v in whole.interfaces.items() if k != local
    }


def test_running_config_bad_interface_command_costs_that_interface() -> None:
    from unifab.parse.switch import eos_config

    rel = "samples/switch/eos/eos_avd_intended_ethernet_interfaces_pfc_excerpt.cfg"
    text = (DATA / rel).read_text()
    whole = eos_config.parse(text)
    lines = text.split("\n")
    start = lines.index("interface Ethernet3")
    i = next(n for n in range(start, len(lines)) if lines[n].strip().startswith("mtu "))
    lines[i] = "   mtu jumbo"
    broken = "\n".join(lines)
    with pytest.raises(ParseError) as strict:
        eos_config.parse(broken)
    assert strict.value.line == i + 1
    got, log = _lenient(eos_config.parse, broken)
    (problem,) = log.problems
    assert problem.line == i + 1 and problem.skipped == "interface Ethernet3"
    assert set(got.interfaces) == set(whole.interfaces) - {"Ethernet3"}
    assert all(got.interfaces[n] == whole.interfaces[n] for n in got.interfaces)
    assert all(got.interface_qos[n] == whole.interface_qos[n] for n in got.interface_qos)


def test_running_config_bad_profile_costs_the_interfaces_applying_it() -> None:
    from unifab.parse.switch import eos_config

    text = (DATA / "samples/switch/eos/eos_avd_intended_qos.cfg").read_text()
    whole = eos_config.parse(text)
    users = {n for n, i in whole.interfaces.items() if i.service_profile == "experiment"}
    assert len(users) >= 2
    broken, line = _replace_line(text, r"^   qos cos 2$", lambda s: "   qos cos twelve")
    got, log = _lenient(eos_config.parse, broken)
    assert log.problems[0].line == line and log.problems[0].skipped == "qos profile experiment"
    assert {p.skipped for p in log.problems[1:]} == {f"interface {n}, which applies that profile" for n in users}
    assert "experiment" not in got.qos_profiles and set(got.interfaces) == set(whole.interfaces) - users
    assert all(got.interface_qos[n] == whole.interface_qos[n] for n in got.interface_qos)


def _anta(name: str, case: str) -> dict[str, Any]:
    wrapper = json.loads((DATA / "samples/switch/eos" / name).read_text())
    fixture: dict[str, Any] = wrapper["fixtures"][case]
    return fixture


def _break_pfc(doc: dict[str, Any]) -> tuple[str, str]:
    name = sorted(doc["interfaceCounters"])[1]
    doc["interfaceCounters"][name]["rxFrames"] = "12k"
    return name, "rxFrames"


def _break_ecn(doc: dict[str, Any]) -> tuple[str, str]:
    name = sorted(doc["intfQueueCounters"])[1]
    doc["intfQueueCounters"][name]["queueCounters"]["1"] = "lots"
    return name, "queueCounters"


def _break_queue(doc: dict[str, Any]) -> tuple[str, str]:
    name = sorted(doc["egressQueueCounters"]["interfaces"])[1]
    tcs = doc["egressQueueCounters"]["interfaces"][name]["ucastQueues"]["trafficClasses"]
    tcs["TCx"] = tcs.pop(sorted(tcs)[0])
    return name, "TCx"


@pytest.mark.parametrize(
    ("sample", "case", "parser", "corrupt"),
    [
        ("eos_show_priority_flow_control_counters.json", "failure", eos_json.parse_pfc_counters, _break_pfc),
        ("eos_show_qos_interfaces_ecn_counters_queue.json", "failure", eos_json.parse_ecn_counters, _break_ecn),
        (
            "eos_show_interfaces_counters_queue_detail.json",
            "failure",
            eos_json.parse_queue_counters_detail,
            _break_queue,
        ),
        (
            "eos_show_interfaces_counters_queue_detail.json",
            "success-all-modular",
            eos_json.parse_queue_counters_detail,
            _break_queue,
        ),
    ],
)
def test_eapi_counters_bad_entry_costs_that_interface(
    sample: str, case: str, parser: Callable[..., Any], corrupt: Callable[[dict[str, Any]], tuple[str, str]]
) -> None:
    doc = _anta(sample, case)
    whole = parser(json.dumps(doc))
    name, key = corrupt(doc)
    broken = json.dumps(doc)
    with pytest.raises(ParseError):
        parser(broken)
    got, log = _lenient(parser, broken)
    (problem,) = log.problems
    assert problem.key is not None and name in problem.key and key in problem.key
    assert name in problem.skipped
    assert len(whole.interfaces) > 1 and got.interfaces == {k: v for k, v in whole.interfaces.items() if k != name}


def test_eapi_counters_every_entry_bad_still_raises() -> None:
    doc = {"interfaceCounters": {"Ethernet1": {"rxFrames": "x"}, "Ethernet2": []}}
    with pytest.raises(ParseError):
        eos_json.parse_pfc_counters(json.dumps(doc), "sample", ParseProblems("sample"))


@pytest.mark.parametrize(
    ("sample", "parser", "command"),
    [
        (
            "eos_show_priority_flow_control_counters.json",
            eos_json.parse_pfc_counters,
            "show priority-flow-control counters",
        ),
        (
            "eos_show_qos_interfaces_ecn_counters_queue.json",
            eos_json.parse_ecn_counters,
            "show qos interfaces ecn counters queue",
        ),
        (
            "eos_show_interfaces_counters_queue_detail.json",
            eos_json.parse_queue_counters_detail,
            "show interfaces counters queue detail",
        ),
    ],
)
def test_eapi_counters_pasted_with_their_prompt_lines(sample: str, parser: Callable[..., Any], command: str) -> None:
    reply = json.dumps(_anta(sample, "failure"), indent=2)
    pasted = f"leaf1#{command} | json\n{reply}\nleaf1#\n"
    assert parser(pasted, "sample") == parser(reply, "sample")
    with pytest.raises(ParseError) as info:  # a prompt inside the JSON is not dropped: the error names its line
        parser(reply.replace("\n", "\nleaf1#\n", 1), "sample")
    assert info.value.line == 2
