"""Tests for the lldpcli parser: real lldpd 1.0.16 samples in json0/json/keyvalue, shapes, errors, round trip."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.jsonify import to_jsonable
from unifab.parse.host import lldpcli
from unifab.parse.host.lldpcli import (
    LldpNeighbor,
    dump_json0,
    parse,
    parse_json,
    parse_json0,
    parse_keyvalue,
)

GOLDEN = Path(__file__).parent / "golden"
HOST_JSON0 = "host/lldpcli_neighbors_details_host.json0.json"
HOST_JSON = "host/lldpcli_neighbors_details_host.json"
HOST_KV = "host/lldpcli_neighbors_details_host.keyvalue.txt"
SWITCH_JSON = "host/lldpcli_neighbors_details_switch.json"
SWITCH_KV = "host/lldpcli_neighbors_details_switch.keyvalue.txt"
SINGLE_PORT = "host/lldpcli_neighbors_single_port.json"
SHOW_INTERFACES = "host/lldpcli_show_interfaces_host.json"

# What lldpcli 1.0.16 prints with no neighbors (captured from the real binary, trailing blanks included).
EMPTY_JSON0_REAL = '{\n  "lldp": [\n    {\n      \n    }\n  ]\n}\n\n'
EMPTY_JSON_REAL = '{\n  "lldp": {\n    \n  }\n}\n\n'

CAPS = ("Other", "Repeater", "Bridge", "Router", "Wlan", "Tel", "Docsis", "Station")
ID_SUBTYPES = ("ifname", "ifalias", "local", "mac", "ip", "unhandled", "unknown")


def read(samples: Path, name: str) -> str:
    return (samples / name).read_text()


def neighbor(**fields: object) -> LldpNeighbor:
    base: dict[str, object] = {
        "local_port": "eth0",
        "via": "LLDP",
        "age": "0 day, 00:00:01",
        "chassis_id": None,
        "chassis_id_type": None,
        "system_name": None,
        "system_descr": None,
        "mgmt_ips": (),
        "capabilities_enabled": (),
        "port_id": None,
        "port_id_type": None,
        "port_descr": None,
        "ttl": None,
        "mfs": None,
    }
    base.update(fields)
    return LldpNeighbor(**base)  # type: ignore[arg-type]


def error(parser: object, raw: str) -> ParseError:
    assert callable(parser)
    with pytest.raises(ParseError) as info:
        parser(raw, "t")
    return info.value


# --- test-side models of lldpd's other writers ------------------------------------------------------


def json_cleanup(el: object) -> object:
    """Python port of json_element_cleanup() (lldpd src/client/json_writer.c): json0 tree -> `-f json` tree."""
    if isinstance(el, list):
        if len(el) == 1:
            return json_cleanup(el[0])
        return [json_cleanup(child) for child in el]
    if isinstance(el, dict):
        if len(el) == 1 and "value" in el:
            return json_cleanup(el["value"])
        cleaned = {key: json_cleanup(child) for key, child in el.items()}
        name = cleaned.get("name")
        if isinstance(name, str):
            return {name: {key: child for key, child in cleaned.items() if key != "name"}}
        return cleaned
    return el


def to_keyvalue(neighbors: tuple[LldpNeighbor, ...]) -> str:
    """What kv_writer.c prints for these neighbors (display.c tag order; all capabilities, on/off)."""
    lines: list[str] = []
    for nb in neighbors:
        p = f"lldp.{nb.local_port}."
        lines += [f"{p}via={nb.via}", f"{p}rid=1"]
        if nb.age is not None:
            lines.append(f"{p}age={nb.age}")
        if nb.chassis_id is not None:
            lines.append(f"{p}chassis.{nb.chassis_id_type}={nb.chassis_id}")
        if nb.system_name is not None:
            lines.append(f"{p}chassis.name={nb.system_name}")
        if nb.system_descr is not None:
            lines.append(f"{p}chassis.descr={nb.system_descr}")
        for ip in nb.mgmt_ips:
            lines += [f"{p}chassis.mgmt-ip={ip}", f"{p}chassis.mgmt-iface=2"]
        for cap in CAPS:
            lines.append(f"{p}chassis.{cap}.enabled={'on' if cap in nb.capabilities_enabled else 'off'}")
        if nb.port_id is not None:
            lines.append(f"{p}port.{nb.port_id_type}={nb.port_id}")
        if nb.port_descr is not None:
            lines.append(f"{p}port.descr={nb.port_descr}")
        if nb.ttl is not None:
            lines.append(f"{p}port.ttl={nb.ttl}")
        if nb.mfs is not None:
            lines.append(f"{p}port.mfs={nb.mfs}")
        lines.append(f"{p}port.auto-negotiation.supported=no")
    return "".join(line + "\n" for line in lines)


def drop_keys(tree: object, keys: set[str]) -> object:
    if isinstance(tree, list):
        return [drop_keys(child, keys) for child in tree]
    if isinstance(tree, dict):
        return {key: drop_keys(child, keys) for key, child in tree.items() if key not in keys}
    return tree


def drop_disabled_capabilities(tree: object) -> object:
    if isinstance(tree, list):
        return [
            drop_disabled_capabilities(child)
            for child in tree
            if not (isinstance(child, dict) and child.get("enabled") is False)
        ]
    if isinstance(tree, dict):
        return {key: drop_disabled_capabilities(child) for key, child in tree.items()}
    return tree


# --- real samples ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "golden"),
    [
        (HOST_JSON0, "lldpcli_neighbors_details_host_json0.json"),
        (HOST_JSON, "lldpcli_neighbors_details_host_json.json"),
        (HOST_KV, "lldpcli_neighbors_details_host_keyvalue.json"),
        (SWITCH_JSON, "lldpcli_neighbors_details_switch_json.json"),
        (SWITCH_KV, "lldpcli_neighbors_details_switch_keyvalue.json"),
        (SINGLE_PORT, "lldpcli_neighbors_single_port_json.json"),
    ],
)
def test_golden(samples: Path, sample: str, golden: str) -> None:
    result = parse(read(samples, sample), sample)
    assert to_jsonable(result) == json.loads((GOLDEN / golden).read_text())


def test_host_values(samples: Path) -> None:
    ens1, ens2 = parse_json0(read(samples, HOST_JSON0))
    assert ens1 == LldpNeighbor(
        local_port="ens1np0",
        via="LLDP",
        age="0 day, 00:00:06",
        chassis_id="02:00:00:00:aa:01",
        chassis_id_type="mac",
        system_name="leaf-su1-r0",
        system_descr="Example leaf switch (lldpd 1.0.16 in netns)",
        mgmt_ips=("192.0.2.1", "fe80::ff:fe00:aa01"),
        capabilities_enabled=("Bridge", "Router"),  # Wlan and Station are available but off
        port_id="swp1",
        port_id_type="ifname",
        port_descr="swp1",
        ttl=120,
        mfs=None,  # veth peers send no 802.3 MFS TLV
    )
    assert (ens2.local_port, ens2.system_name, ens2.port_id, ens2.port_id_type) == (
        "ens2np0",
        "leaf-su1-r0",
        "swp2",
        "ifname",
    )


def test_switch_values(samples: Path) -> None:
    swp1, swp2 = parse_json(read(samples, SWITCH_JSON))
    # a Linux host running lldpd: port id subtype mac, ifname in PortDescr, capability Station only
    assert (swp1.local_port, swp1.system_name, swp1.chassis_id, swp1.chassis_id_type) == (
        "swp1",
        "gpu-node-001",
        "02:00:00:00:01:01",
        "mac",
    )
    assert (swp1.port_id, swp1.port_id_type, swp1.port_descr) == ("02:00:00:00:01:01", "mac", "ens1np0")
    assert (swp2.port_id, swp2.port_id_type, swp2.port_descr) == ("02:00:00:00:01:02", "mac", "ens2np0")
    assert swp1.capabilities_enabled == swp2.capabilities_enabled == ("Station",)
    assert swp1.mgmt_ips == ("192.0.2.11", "fe80::ff:fe00:101")
    assert swp1.system_descr is not None and swp1.system_descr.startswith("Debian GNU/Linux 12 (bookworm)")
    assert (swp1.ttl, swp1.via, swp1.age) == (120, "LLDP", "0 day, 00:00:12")


def test_three_formats_of_one_capture_agree(samples: Path) -> None:
    # keyvalue carries every LldpNeighbor field (ids as `chassis.<subtype>=`), so whole records compare.
    from_json0 = parse_json0(read(samples, HOST_JSON0))
    assert len(from_json0) == 2
    assert parse_json(read(samples, HOST_JSON)) == from_json0
    assert parse_keyvalue(read(samples, HOST_KV)) == from_json0
    switch = parse_json(read(samples, SWITCH_JSON))
    assert len(switch) == 2
    assert parse_keyvalue(read(samples, SWITCH_KV)) == switch


def test_single_port_interface_is_an_object(samples: Path) -> None:
    raw = read(samples, SINGLE_PORT)
    assert isinstance(orjson.loads(raw)["lldp"]["interface"], dict)
    assert parse_json(raw) == parse_json0(read(samples, HOST_JSON0))[:1]


@pytest.mark.parametrize(
    ("sample", "parser"),
    [
        (HOST_JSON0, parse_json0),
        (HOST_JSON, parse_json),
        (HOST_KV, parse_keyvalue),
        (SWITCH_JSON, parse_json),
        (SWITCH_KV, parse_keyvalue),
        (SINGLE_PORT, parse_json),
    ],
)
def test_parse_detects_format(samples: Path, sample: str, parser: object) -> None:
    assert callable(parser)
    assert parse(read(samples, sample)) == parser(read(samples, sample))


def test_show_interfaces_output_is_rejected(samples: Path) -> None:
    err = error(parse, read(samples, SHOW_INTERFACES))
    assert err.key == "lldp.interface[0].ens1np0.status"
    assert "show interfaces" in err.expected
    kv = "lldp.ens1np0.status=RX and TX\nlldp.ens1np0.chassis.mac=02:00:00:00:01:01\n"
    assert error(parse_keyvalue, kv).line == 1


# --- dump_json0 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", [HOST_JSON0, HOST_JSON, SWITCH_JSON, SINGLE_PORT, SHOW_INTERFACES])
def test_lldpd_printer_reproduces_samples_byte_for_byte(samples: Path, sample: str) -> None:
    raw = read(samples, sample)
    assert lldpcli._dumps(orjson.loads(raw)) == raw


def test_render_json0_matches_real_output(samples: Path) -> None:
    raw = read(samples, HOST_JSON0)
    rendered = dump_json0(parse_json0(raw))
    # everything lldpd printed except what LldpNeighbor does not keep, in the same key order and layout
    expected = drop_disabled_capabilities(drop_keys(orjson.loads(raw), {"mgmt-iface", "auto-negotiation"}))
    assert rendered == lldpcli._dumps(expected)
    assert orjson.dumps(orjson.loads(rendered)) == orjson.dumps(expected)


def test_render_json0_empty_is_byte_exact() -> None:
    assert dump_json0([]) == EMPTY_JSON0_REAL
    assert parse_json0(EMPTY_JSON0_REAL) == ()


def test_render_json0_rid_numbers_remote_chassis() -> None:
    a = neighbor(local_port="p1", chassis_id="02:00:00:00:00:01", chassis_id_type="mac")
    b = neighbor(local_port="p2", chassis_id="02:00:00:00:00:02", chassis_id_type="mac")
    doc = orjson.loads(dump_json0([a, b, a]))
    assert [i["rid"] for i in doc["lldp"][0]["interface"]] == ["1", "2", "1"]


def test_render_json0_mfs_and_escapes() -> None:
    nb = neighbor(
        chassis_id="c",
        chassis_id_type="local",
        system_descr='Cisco IOS "XE"\nTechnical Support: C:\\tac\t\x01',
        port_id="Gi1/0/1",
        port_id_type="ifname",
        port_descr="uplink",
        ttl=120,
        mfs=9216,
    )
    rendered = dump_json0([nb])
    assert r'"value": "Cisco IOS \"XE\"\nTechnical Support: C:\\tac\t\u0001"' in rendered
    port = orjson.loads(rendered)["lldp"][0]["interface"][0]["port"][0]
    assert list(port) == ["id", "descr", "ttl", "mfs"]  # display_port(): ttl, then the dot3 TLVs
    assert port["mfs"] == [{"value": "9216"}]
    assert parse_json0(rendered) == (nb,)


@pytest.mark.parametrize("sample", [HOST_JSON0, HOST_JSON, SWITCH_JSON, SINGLE_PORT])
def test_samples_round_trip(samples: Path, sample: str) -> None:
    neighbors = parse(read(samples, sample))
    assert parse_json0(dump_json0(neighbors)) == neighbors
    assert parse(dump_json0(neighbors)) == neighbors


def test_json_cleanup_model_matches_lldpd(samples: Path) -> None:
    assert json_cleanup(orjson.loads(read(samples, HOST_JSON0))) == orjson.loads(read(samples, HOST_JSON))
    assert json_cleanup(orjson.loads(EMPTY_JSON0_REAL)) == orjson.loads(EMPTY_JSON_REAL)


# --- constructed variants -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parser", "raw"),
    [
        (parse_json0, EMPTY_JSON0_REAL),
        (parse_json0, '{"lldp": [{}]}'),
        (parse_json, EMPTY_JSON_REAL),
        (parse_json, '{"lldp": {}}'),
        (parse_json, '{"lldp": [{}]}'),
        (parse_keyvalue, ""),
        (parse_keyvalue, "\n"),
        (parse, EMPTY_JSON0_REAL),
        (parse, EMPTY_JSON_REAL),
        (parse, ""),
    ],
)
def test_no_neighbors(parser: object, raw: str) -> None:
    assert callable(parser)
    assert parser(raw) == ()


# From lldpd 1.0.16 `-f json` on a veth pair: one management address and no mfs; the chassis is
# keyed by SysName, mgmt-ip and mgmt-iface collapse to strings.
REAL_SINGLE_MGMT = """{
  "lldp": {
    "interface": {
      "swp1": {
        "via": "LLDP",
        "rid": "1",
        "age": "0 day, 00:00:07",
        "chassis": {
          "gpu-node-001": {
            "id": {
              "type": "mac",
              "value": "9e:47:33:88:de:7b"
            },
            "mgmt-ip": "fe80::609b:70ff:fed6:6abf",
            "mgmt-iface": "2",
            "capability": {
              "type": "Station",
              "enabled": true
            }
          }
        },
        "port": {
          "id": {
            "type": "mac",
            "value": "9e:47:33:88:de:7b"
          },
          "descr": "ens1np0",
          "ttl": "4"
        }
      }
    }
  }
}
"""


def test_json_single_members_collapse() -> None:
    (nb,) = parse_json(REAL_SINGLE_MGMT)
    assert (nb.system_name, nb.mgmt_ips, nb.capabilities_enabled, nb.ttl) == (
        "gpu-node-001",
        ("fe80::609b:70ff:fed6:6abf",),
        ("Station",),
        4,
    )


def test_json_chassis_without_sysname_is_not_keyed() -> None:
    raw = json.dumps(
        {
            "lldp": {
                "interface": {
                    "eth0": {
                        "via": "LLDP",
                        "rid": "3",
                        "chassis": {"id": {"type": "mac", "value": "02:00:00:00:00:09"}},
                        "port": {"id": {"type": "local", "value": "7"}},
                    }
                }
            }
        }
    )
    (nb,) = parse_json(raw)
    assert (nb.system_name, nb.chassis_id, nb.chassis_id_type) == (None, "02:00:00:00:00:09", "mac")
    assert (nb.port_id, nb.port_id_type) == ("7", "local")


def test_two_neighbors_on_one_port() -> None:
    # an unmanaged bridge between us and two LLDP speakers: two interface elements, same name
    a = neighbor(local_port="eth0", system_name="sw-a", chassis_id="a", chassis_id_type="local")
    b = neighbor(local_port="eth0", system_name="sw-b", chassis_id="b", chassis_id_type="local")
    c = neighbor(local_port="eth1", system_name="sw-a", chassis_id="a", chassis_id_type="local")
    rendered = dump_json0([a, b, c])
    assert parse_json0(rendered) == (a, b, c)
    cleaned = json_cleanup(orjson.loads(rendered))
    assert [next(iter(i)) for i in cleaned["lldp"]["interface"]] == ["eth0", "eth0", "eth1"]  # type: ignore[index]
    assert parse_json(orjson.dumps(cleaned).decode()) == (a, b, c)
    assert parse_keyvalue(to_keyvalue((a, b, c))) == (a, b, c)


def test_json_from_an_enable_json0_build() -> None:
    # lldpd configured with --enable-json0 prints the json0 shape for `-f json`
    raw = dump_json0([neighbor(system_name="x")])
    assert parse_json(raw) == parse_json0(raw)


def test_keyvalue_dotted_interface_names() -> None:
    kv = "lldp.bond0.100.via=LLDP\nlldp.bond0.100.chassis.mac=02:00:00:00:00:01\nlldp.bond0.100.port.ifname=Ethernet0\n"
    (nb,) = parse_keyvalue(kv)
    assert (nb.local_port, nb.chassis_id, nb.port_id, nb.port_id_type) == (
        "bond0.100",
        "02:00:00:00:00:01",
        "Ethernet0",
        "ifname",
    )


def test_keyvalue_multiline_value_continues_on_next_lines() -> None:
    descr = "Cisco IOS Software, C3750E Software\nTechnical Support: http://www.cisco.com/techsupport\n= x"
    nb = neighbor(system_descr=descr, chassis_id="c", chassis_id_type="local", ttl=120)
    kv = to_keyvalue((nb,))
    assert "\nTechnical Support: http://www.cisco.com/techsupport\n= x\n" in kv
    assert parse_keyvalue(kv) == (nb,) == parse_json0(dump_json0([nb]))
    assert parse_keyvalue(kv.replace("\n", "\r\n")) == (nb,)


def test_keyvalue_ignores_what_it_does_not_model() -> None:
    kv = (
        "lldp.eth0.via=CDPv2\n"
        "lldp.eth0.rid=4\n"
        "lldp.eth0.chassis.local=SW1\n"
        "lldp.eth0.port.ifname=Gi0/1\n"
        "lldp.eth0.port.power.supported=yes\n"
        "lldp.eth0.vlan.vlan-id=10\n"
        "lldp.eth0.vlan.pvid=yes\n"
        "lldp.eth0.vlan=v10\n"
        "lldp.eth0.lldp-med.device-type=Network Connectivity Device\n"
        "lldp.eth0.unknown-tlvs.unknown-tlv.oui=00,80,C2\n"
    )
    assert parse_keyvalue(kv) == (
        neighbor(
            via="CDPv2", age=None, chassis_id="SW1", chassis_id_type="local", port_id="Gi0/1", port_id_type="ifname"
        ),
    )


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parser", "raw", "key", "expected"),
    [
        (parse_json0, "[]", "<root>", "expected an object"),
        (parse_json0, "{}", "lldp", "top-level key 'lldp'"),
        (parse_json0, '{"lldp": {}}', "lldp", "expected a list"),
        (parse_json0, '{"lldp": [{"interface": {}}]}', "lldp[0].interface", "expected a list"),
        (parse_json0, '{"lldp": [{"interface": [{"via": "LLDP"}]}]}', "lldp[0].interface[0].name", "a string"),
        (
            parse_json0,
            '{"lldp": [{"interface": [{"name": "e", "chassis": [{}, {}]}]}]}',
            "lldp[0].interface[0].chassis",
            "one-element list",
        ),
        (
            parse_json0,
            '{"lldp": [{"interface": [{"name": "e", "port": [{"ttl": [{"value": "2m"}]}]}]}]}',
            "lldp[0].interface[0].port[0].ttl[0].value",
            "unsigned integer",
        ),
        (
            parse_json0,
            '{"lldp": [{"interface": [{"name": "e", "chassis": [{"mgmt-ip": [{"v": "1"}]}]}]}]}',
            "lldp[0].interface[0].chassis[0].mgmt-ip[0].value",
            "a string",
        ),
        (
            parse_json0,
            '{"lldp": [{"interface": [{"name": "e", "chassis": [{"capability": '
            '[{"type": "Bridge", "enabled": "on"}]}]}]}]}',
            "lldp[0].interface[0].chassis[0].capability[0].enabled",
            "true or false",
        ),
        (parse_json, '{"lldp": 3}', "lldp", "expected an object"),
        (
            parse_json,
            '{"lldp": {"interface": [{"a": {}, "b": {}}]}}',
            "lldp.interface[0]",
            "interface name as its only key",
        ),
        (parse_json, '{"lldp": {"interface": {"eth0": []}}}', "lldp.interface.eth0", "expected an object"),
        (
            parse_json,
            '{"lldp": {"interface": {"eth0": {"port": {"id": {"type": 5}}}}}}',
            "lldp.interface.eth0.port.id.type",
            "a string",
        ),
        (
            parse_json,
            '{"lldp": {"interface": {"eth0": {"chassis": {"sw1": {"id": "x"}}, "port": {"mfs": "-1"}}}}}',
            "lldp.interface.eth0.port.mfs",
            "unsigned integer",
        ),
        (
            parse_json,
            '{"lldp": {"interface": {"eth0": {"chassis": {"sw1": {"mgmt-ip": ["1.1.1.1", 2]}}}}}}',
            "lldp.interface.eth0.chassis.sw1.mgmt-ip[1]",
            "a string",
        ),
    ],
)
def test_json_errors_name_the_key(parser: object, raw: str, key: str, expected: str) -> None:
    err = error(parser, raw)
    assert (err.source, err.key, err.line) == ("t", key, None)
    assert expected in err.expected


def test_invalid_json_names_the_line() -> None:
    # lldpd 1.0.16 prints lifted names as raw keys: a SysName with a backslash breaks `-f json`
    # (captured from the real binary with `configure system hostname leaf-q\\x`); json0 stays valid.
    raw = '{\n  "lldp": {\n    "interface": {\n      "eth0": {\n        "chassis": {\n          "leaf-q\\x": {\n'
    err = error(parse_json, raw + "          }\n        }\n      }\n    }\n  }\n}\n")
    assert err.line == 6
    assert "expected JSON" in err.expected
    assert error(parse, '{"lldp": [').line == 1


@pytest.mark.parametrize(
    ("raw", "line", "expected"),
    [
        ("Interface:    eth0, via: LLDP\n", 1, "lldp.<interface>.<key>=<value>"),
        ('{"lldp": {}}', 1, "lldp.<interface>.<key>=<value>"),
        ("lldp.eth0.via=LLDP\nlldp.eth0=x\n", 2, "got key 'lldp.eth0'"),
        ("lldp.eth0.via=LLDP\nlldp.eth0.port.ttl=120s\n", 2, "unsigned integer for port.ttl"),
        ("lldp.eth0.via=LLDP\nlldp.eth0.port.mfs=\n", 2, "unsigned integer for port.mfs"),
        ("lldp.eth0.via=LLDP\nlldp.eth0.chassis.name=a\nlldp.eth0.chassis.name=b\n", 3, "one chassis.name"),
        ("lldp.eth0.via=LLDP\nlldp.eth0.chassis.mac=a\nlldp.eth0.chassis.local=b\n", 3, "one chassis.id"),
        ("lldp.eth0.via=LLDP\nlldp.eth0.chassis.Bridge.enabled=yes\n", 2, "'on' or 'off'"),
    ],
)
def test_keyvalue_errors_name_the_line(raw: str, line: int, expected: str) -> None:
    err = error(parse_keyvalue, raw)
    assert (err.source, err.line) == ("t", line)
    assert expected in err.expected


# --- properties -----------------------------------------------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=16)
_ATTR = _TEXT.filter(lambda s: s not in ("yes", "on", "no", "off"))  # lldpd prints those as booleans
_IFNAME = st.from_regex(r"[a-z]{1,5}[0-9]{1,2}(np[0-9])?(\.[0-9]{1,4})?", fullmatch=True)
_CAPS = st.lists(st.sampled_from(CAPS), unique=True).map(lambda caps: tuple(sorted(caps, key=CAPS.index)))
_IPS = st.lists(st.ip_addresses().map(str), max_size=3).map(tuple)
_NUM = st.none() | st.integers(0, 65535)
# Generation is cheap (~10 ms per example) but the suite shares the machine with other work.
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)


@st.composite
def neighbors_st(draw: st.DrawFn, keyvalue: bool = False) -> LldpNeighbor:
    """Any record for json0/json; for keyvalue, what kv can express (ids with an lldpd subtype, a via)."""
    ids = []
    for _ in range(2):
        if keyvalue:
            value = draw(st.none() | _TEXT)
            ids.append((value, None if value is None else draw(st.sampled_from(ID_SUBTYPES))))
        else:
            ids.append((draw(st.none() | _TEXT), draw(st.none() | st.sampled_from(ID_SUBTYPES) | _ATTR)))
    (chassis_id, chassis_type), (port_id, port_type) = ids
    return LldpNeighbor(
        local_port=draw(_IFNAME if keyvalue else _IFNAME | _ATTR),
        via=draw(st.sampled_from(["LLDP", "CDPv2"]) if keyvalue else st.none() | _ATTR),
        age=draw(st.none() | _ATTR),
        chassis_id=chassis_id,
        chassis_id_type=chassis_type,
        system_name=draw(st.none() | _TEXT | st.sampled_from(["id", "descr", "capability", "value", "name"])),
        system_descr=draw(st.none() | _TEXT),
        mgmt_ips=draw(_IPS),
        capabilities_enabled=draw(_CAPS),
        port_id=port_id,
        port_id_type=port_type,
        port_descr=draw(st.none() | _TEXT),
        ttl=draw(_NUM),
        mfs=draw(_NUM),
    )


_NEIGHBORS = st.lists(neighbors_st(), max_size=4).map(tuple)


@settings(_SETTINGS, max_examples=300)
@given(_NEIGHBORS)
def test_render_json0_round_trip(neighbors: tuple[LldpNeighbor, ...]) -> None:
    rendered = dump_json0(neighbors)
    assert parse_json0(rendered) == neighbors
    assert parse(rendered) == neighbors


@settings(_SETTINGS, max_examples=300)
@given(_NEIGHBORS)
def test_json_shape_round_trip(neighbors: tuple[LldpNeighbor, ...]) -> None:
    cleaned = orjson.dumps(json_cleanup(orjson.loads(dump_json0(neighbors)))).decode()
    assert parse_json(cleaned) == neighbors
    assert parse(cleaned) == neighbors


@settings(_SETTINGS, max_examples=200)
@given(st.lists(neighbors_st(keyvalue=True), max_size=4).map(tuple))
def test_keyvalue_round_trip(neighbors: tuple[LldpNeighbor, ...]) -> None:
    kv = to_keyvalue(neighbors)
    assert parse_keyvalue(kv) == neighbors
    assert parse(kv) == neighbors


_VOCAB = ["lldp", "interface", "name", "via", "age", "chassis", "port", "id", "type", "value", "descr"]
_VOCAB += ["mgmt-ip", "capability", "enabled", "ttl", "mfs", "status", "eth0"]
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "1", "x", "on"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_VOCAB), inner, max_size=4),
    max_leaves=16,
)


@settings(_SETTINGS, max_examples=400)
@given(_JSON, st.sampled_from(["bare", "json0", "json"]))
def test_malformed_json_raises_only_parse_error(doc: object, wrap: str) -> None:
    if wrap == "json0":
        doc = {"lldp": [{"interface": [doc]}]}
    elif wrap == "json":
        doc = {"lldp": {"interface": doc}}
    raw = orjson.dumps(doc).decode()
    for parser in (parse_json0, parse_json, parse):
        try:
            result = parser(raw)
        except ParseError:
            continue
        assert all(isinstance(nb, LldpNeighbor) for nb in result)


_KV_KEYS = st.lists(
    st.sampled_from(["lldp", "eth0", "via", "chassis", "port", "mac", "name", "ttl", "mfs", "enabled", "Bridge", ""]),
    max_size=5,
)


@settings(_SETTINGS, max_examples=300)
@given(st.lists(st.tuples(_KV_KEYS, st.booleans(), st.sampled_from(["", "1", "on", "x=y", "LLDP"])), max_size=6))
def test_malformed_keyvalue_raises_only_parse_error(lines: list[tuple[list[str], bool, str]]) -> None:
    raw = "".join(".".join(key) + ("=" if sep else "") + value + "\n" for key, sep, value in lines)
    try:
        result = parse_keyvalue(raw)
    except ParseError as err:
        assert err.line is not None
        return
    assert all(isinstance(nb, LldpNeighbor) for nb in result)
