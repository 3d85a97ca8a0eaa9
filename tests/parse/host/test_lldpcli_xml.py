"""Tests for the ``lldpcli -f xml show neighbors details`` parser: same records as json0, errors, fuzz."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from unifab.errors import ParseError
from unifab.parse.host import lldpcli
from unifab.parse.host.lldpcli_xml import parse

GOLDEN = Path(__file__).parent / "golden"
XML = "host/lldpcli_neighbors_details_host.xml"
JSON0 = "host/lldpcli_neighbors_details_host.json0.json"
GoldenCheck = Callable[[Path, Any], None]


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "t.xml")
    return info.value


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "lldpcli_neighbors_details_host_xml.json", parse((samples / XML).read_text(), XML))


def test_same_records_as_json0(samples: Path) -> None:
    xml = parse((samples / XML).read_text())
    assert len(xml) == 2
    assert xml == lldpcli.parse((samples / JSON0).read_text())


def test_sample_values(samples: Path) -> None:
    first = parse((samples / XML).read_text())[0]
    assert (first.local_port, first.via, first.system_name, first.port_id, first.ttl) == (
        "ens1np0",
        "LLDP",
        "leaf-su1-r0",
        "swp1",
        120,
    )
    assert first.mgmt_ips == ("192.0.2.1", "fe80::ff:fe00:aa01")
    assert first.capabilities_enabled == ("Bridge", "Router")


def test_no_neighbors_and_mfs() -> None:
    assert parse('<?xml version="1.0" encoding="UTF-8"?>\n<lldp label="LLDP neighbors"/>\n') == ()
    (nb,) = parse(
        '<lldp><interface name="eth0.100" via="CDPv2"><port><id type="local">Eth1/1</id>'
        '<mfs label="MFS">9216</mfs></port></interface></lldp>'
    )
    assert (nb.local_port, nb.via, nb.port_id, nb.port_id_type, nb.mfs, nb.chassis_id) == (
        "eth0.100",
        "CDPv2",
        "Eth1/1",
        "local",
        9216,
        None,
    )


def test_errors_name_the_line() -> None:
    assert parse_error("").line == 1
    assert parse_error("<lldp>\n<interface name='x'>\n").line is not None
    err = parse_error("<lldp>\n <interface name='x'>\n  <port><ttl>soon</ttl></port>\n </interface>\n</lldp>\n")
    assert err.line == 3 and "unsigned integer" in err.expected
    err = parse_error("<lldp>\n <interface via='LLDP'/>\n</lldp>\n")
    assert err.line == 2 and "'name'" in err.expected
    err = parse_error("<lldp>\n <interface name='x' status='RX and TX'/>\n</lldp>\n")
    assert err.line == 2 and "show interfaces" in err.expected
    err = parse_error(
        "<lldp><interface name='x'><chassis>\n<capability type='Bridge' enabled='maybe'/></chassis></interface></lldp>"
    )
    assert err.line == 2
    assert "<lldp>" in parse_error("<nvidia_smi_log/>").expected


def test_entity_declarations_are_refused() -> None:
    raw = '<?xml version="1.0"?>\n<!DOCTYPE lldp [<!ENTITY x "boom">]>\n<lldp>&x;</lldp>\n'
    assert parse_error(raw).line == 2
