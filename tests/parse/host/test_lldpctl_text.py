"""lldpd plain text (`lldpctl`, `lldpcli show neighbors details`): real samples, a writer model, errors, fuzz."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError, ParseProblems
from unifab.parse.host import lldpcli, lldpctl_text
from unifab.parse.host.lldpcli import LldpNeighbor
from unifab.parse.netdev import Neighbor, neighbor_from_lldpd

GOLDEN = Path(__file__).parent / "golden"
UBUNTU = "host/ubuntu-16.04_edge01_lldpctl.txt"
HOST_TXT = "host/lldpcli_neighbors_details_host.txt"
HOST_KV = "host/lldpcli_neighbors_details_host.keyvalue.txt"
CUMULUS_TXT = "switch/nvue/suzieq_texttfsm_lldpd.txt"

SEP = "-" * 79
CAPS = ("Other", "Repeater", "Bridge", "Router", "Wlan", "Tel", "Docsis", "Station")
ID_SUBTYPES = ("ifname", "ifalias", "local", "mac", "ip", "unhandled", "unknown")
_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)


def read(samples: Path, name: str) -> str:
    return (samples / name).read_text()


def error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        lldpctl_text.parse_details(raw, "t")
    return info.value


# --- a model of lldpd's text writer (src/client/text_writer.c) and display_interface() -----------


class TxtWriter:
    """Python port of txt_start/txt_attr/txt_data/txt_end (lldpd 1.0.x)."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.level = 0
        self.attrs = 0
        self.lastnl = True

    def put(self, text: str) -> None:
        while self.lastnl and text.startswith("\n"):
            text = text[1:]
        if text:
            self.out.append(text)
            self.lastnl = text.endswith("\n")

    def start(self, descr: str) -> None:
        if self.level == 0:
            self.put(SEP + "\n")
        elif not self.lastnl:
            self.put("\n")
        for _ in range(1, self.level):
            self.put("  ")
        self.put(f"{descr + ':':<13}")
        if self.level == 0:
            self.put("\n" + SEP)
        self.level += 1
        self.attrs = 0

    def attr(self, descr: str, value: str) -> None:
        self.put((", " if self.attrs else " ") + (f"{descr}: {value}" if descr else value))
        self.attrs += 1

    def data(self, value: str) -> None:
        self.put(" ")
        *lines, last = value.split("\n")
        for line in lines:
            self.put(line + "\n")
            for _ in range(1, self.level - 1):
                self.put("  ")
            self.put(" " * 14)
        self.put(last)

    def end(self) -> None:
        self.level -= 1
        if self.level == 1:
            self.put("\n" + SEP)

    def datatag(self, descr: str, value: str | None) -> None:
        if value is not None:
            self.start(descr)
            self.data(value)
            self.end()

    def finish(self) -> str:
        self.put("\n")
        return "".join(self.out)


def to_text(neighbors: Sequence[LldpNeighbor]) -> str:
    """What `lldpcli show neighbors details` prints for these records (modelled fields only)."""
    w = TxtWriter()
    w.start("LLDP neighbors")
    rids: dict[str | None, int] = {}  # lldpd numbers remote chassis, not neighbors
    for nb in neighbors:
        rid = rids.setdefault(nb.chassis_id, len(rids) + 1)
        w.start("Interface")
        w.attr("", nb.local_port)
        if nb.via is not None:
            w.attr("via", nb.via)
        w.attr("RID", str(rid))
        if nb.age is not None:
            w.attr("Time", nb.age)
        w.start("Chassis")
        if nb.chassis_id is not None:
            w.start("ChassisID")
            w.attr("", nb.chassis_id_type or "unknown")
            w.data(nb.chassis_id)
            w.end()
        w.datatag("SysName", nb.system_name)
        w.datatag("SysDescr", nb.system_descr)
        for ip in nb.mgmt_ips:
            w.datatag("MgmtIP", ip)
        for cap in CAPS:
            if cap in nb.capabilities_enabled:
                w.start("Capability")
                w.attr("", cap)
                w.attr("", "on")
                w.end()
        w.end()
        w.start("Port")
        if nb.port_id is not None:
            w.start("PortID")
            w.attr("", nb.port_id_type or "unknown")
            w.data(nb.port_id)
            w.end()
        w.datatag("PortDescr", nb.port_descr)
        w.datatag("TTL", None if nb.ttl is None else str(nb.ttl))
        w.datatag("MFS", None if nb.mfs is None else str(nb.mfs))
        w.end()
        w.end()
    w.end()
    return w.finish()


# --- real samples ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "golden_name"),
    [
        (UBUNTU, "ubuntu-16.04_edge01_lldpctl.json"),
        (HOST_TXT, "lldpcli_neighbors_details_host_txt.json"),
    ],
)
def test_golden(samples: Path, golden: object, sample: str, golden_name: str) -> None:
    assert callable(golden)
    golden(GOLDEN / golden_name, lldpctl_text.parse(read(samples, sample), sample))


def test_ubuntu_edge01_values_by_hand(samples: Path) -> None:
    # edge01 (Ubuntu 16.04, lldpd 0.7.x: no TTL line) sees exit01/exit02 swp5 on eth1/eth2
    eth1, eth2 = lldpctl_text.parse_details(read(samples, UBUNTU))
    assert eth1 == LldpNeighbor(
        local_port="eth1",
        via="LLDP",
        age="0 day, 00:06:15",
        chassis_id="52:54:00:7f:7a:90",
        chassis_id_type="mac",
        system_name="exit01",
        system_descr="Cumulus Linux version 4.3.0 running on QEMU Standard PC (i440FX + PIIX, 1996)",
        mgmt_ips=("10.0.0.101", "fe80::5054:ff:fe7f:7a90"),
        capabilities_enabled=("Router",),  # "Bridge, off" is dropped; LLDP-MED "Capability:" lines ignored
        port_id="swp5",
        port_id_type="ifname",
        port_descr="swp5",
        ttl=None,
        mfs=None,
    )
    assert (eth2.local_port, eth2.system_name, eth2.chassis_id, eth2.port_id) == (
        "eth2",
        "exit02",
        "52:54:00:cf:36:be",
        "swp5",
    )
    assert lldpctl_text.parse(read(samples, UBUNTU))[0] == Neighbor(
        local_port="eth1",
        system_name="exit01",
        chassis_id="52:54:00:7f:7a:90",
        port_id="swp5",
        port_id_type="ifname",
        port_descr="swp5",
        mgmt_ip="10.0.0.101",
        mfs=None,
    )


def test_text_equals_keyvalue_of_the_same_capture(samples: Path) -> None:
    # the lldpd 1.0.16 capture was printed in every format: plain text must give the same records
    assert lldpctl_text.parse_details(read(samples, HOST_TXT)) == lldpcli.parse(read(samples, HOST_KV))


def test_writer_model_matches_lldpd(samples: Path) -> None:
    # the writer above reproduces the real 1.0.16 text, minus the lines the record does not keep
    dropped = ("MgmtIface:", "PMD autoneg:", "MAU oper type:", "Capability:   Wlan, off", "Capability:   Station, off")
    raw = read(samples, HOST_TXT)
    expected = "".join(line for line in raw.splitlines(keepends=True) if not line.strip().startswith(dropped))
    assert to_text(lldpctl_text.parse_details(raw)) == expected


def test_cumulus_switch_capture_has_ttl_under_port(samples: Path) -> None:
    neighbors = lldpctl_text.parse_details(read(samples, CUMULUS_TXT))
    assert [(n.local_port, n.system_name, n.port_id, n.ttl) for n in neighbors] == [
        ("swp1", "spine01", "swp1", 120),
        ("swp2", "spine02", "swp1", 120),
        ("swp3", "leaf02", "swp3", 120),
    ]
    assert neighbors[2].capabilities_enabled == ("Bridge", "Router")


# --- constructed variants -------------------------------------------------------------------------


def test_no_neighbors() -> None:
    assert lldpctl_text.parse(f"{SEP}\nLLDP neighbors:\n{SEP}\n") == ()


def test_multiline_sysdescr_and_mfs() -> None:
    # A Cisco peer: multi-line SysDescr continues at the value column (4 + 14 spaces), MFS under Port
    raw = (
        f"{SEP}\nLLDP neighbors:\n{SEP}\n"
        "Interface:    ens1np0, via: LLDP, RID: 3, Time: 12 days, 01:02:03\n"
        "  Chassis:     \n"
        "    ChassisID:    mac 00:14:1C:57:A4:8B\n"
        "    SysName:      leaf-q7\n"
        "    SysDescr:     Cisco IOS Software, C3750E Software\n"
        "                  Technical Support: http://www.cisco.com/techsupport\n"
        "                    indented line\n"
        "    MgmtIP:       10.0.0.7\n"
        "    Capability:   Bridge, on\n"
        "  Port:        \n"
        "    PortID:       local Gi1/0/7\n"
        "    PortDescr:    GigabitEthernet1/0/7\n"
        "    TTL:          120\n"
        "    MFS:          9216\n"
        "  VLAN:         100, pvid: yes v100\n"
        f"{SEP}\n"
    )
    (nb,) = lldpctl_text.parse_details(raw)
    assert nb.system_descr == (
        "Cisco IOS Software, C3750E Software\nTechnical Support: http://www.cisco.com/techsupport\n  indented line"
    )
    assert (nb.age, nb.mfs, nb.ttl, nb.port_id, nb.port_id_type) == ("12 days, 01:02:03", 9216, 120, "Gi1/0/7", "local")
    assert lldpctl_text.parse(raw) == (
        Neighbor(
            "ens1np0", "leaf-q7", "00:14:1c:57:a4:8b", "Gi1/0/7", "local", "GigabitEthernet1/0/7", "10.0.0.7", 9216
        ),
    )
    assert lldpctl_text.parse_details(raw.replace("\n", "\r\n")) == (nb,)


def test_host_port_id_mac_is_normalized() -> None:
    nb = LldpNeighbor(
        "swp1", "LLDP", None, "sw", "local", "h1", None, (), (), "9E:47:33:88:DE:7B", "mac", "ens1np0", 4, None
    )
    assert neighbor_from_lldpd(nb).port_id == "9e:47:33:88:de:7b"
    assert lldpctl_text.parse(to_text([nb]))[0].port_id == "9e:47:33:88:de:7b"


def test_ttl_under_chassis_is_accepted() -> None:
    raw = (
        f"{SEP}\nLLDP neighbors:\n{SEP}\n"
        "Interface:    eth0, via: LLDP, RID: 1, Time: 0 day, 00:00:10\n"
        "  Chassis:     \n"
        "    ChassisID:    local sw7\n"
        "    TTL:          120\n"
        "  Port:        \n"
        "    PortID:       ifname swp7\n"
        f"{SEP}\n"
    )
    (nb,) = lldpctl_text.parse_details(raw)
    assert (nb.chassis_id, nb.chassis_id_type, nb.ttl, nb.system_name) == ("sw7", "local", 120, None)


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "line", "expected"),
    [
        ("", 1, "LLDP neighbors:"),
        ('{"lldp": {}}', 1, "`Interface:"),
        (f"{SEP}\nLLDP interfaces:\n{SEP}\n", 2, "LLDP neighbors:"),
        ("Interface:    eth0, via: LLDP\n", 1, "before the first interface"),
        ("LLDP neighbors:\n  Chassis:\n", 2, "before indented lines"),
        ("LLDP neighbors:\nInterface:    eth0, via: LLDP\n                  orphan\n", 3, "`Label:  value`"),
        (
            "LLDP neighbors:\nInterface:    eth0, via: LLDP\n  Port:\n    TTL:          2m\n",
            4,
            "unsigned integer for ttl",
        ),
        (
            "LLDP neighbors:\nInterface:    eth0, via: LLDP\n  Chassis:\n    SysName:      a\n    SysName:      b\n",
            5,
            "one SysName per neighbor",
        ),
        ("LLDP neighbors:\nInterface:    eth0\n  Chassis:\n    Capability:   Bridge, maybe\n", 4, "on|off"),
        ("LLDP neighbors:\nInterface:    eth0\n  no colon here\n", 3, "`Label:  value`"),
    ],
)
def test_errors_name_the_line(raw: str, line: int, expected: str) -> None:
    err = error(raw)
    assert (err.source, err.line) == ("t", line)
    assert expected in err.expected


# --- properties -----------------------------------------------------------------------------------

_WORD = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_./:()-]{0,15}", fullmatch=True)
_LINE = st.from_regex(r"[A-Za-z0-9(][A-Za-z0-9 ().,:/=-]{0,30}", fullmatch=True).map(str.rstrip)
_CONT = st.from_regex(r"[ ]{0,2}[A-Za-z0-9(][A-Za-z0-9 ().,:/=-]{0,30}", fullmatch=True).map(str.rstrip)
_IFNAME = st.from_regex(r"[a-z]{1,5}[0-9]{1,2}(np[0-9])?(\.[0-9]{1,4})?", fullmatch=True)
_AGE = st.tuples(st.integers(0, 400), st.integers(0, 23), st.integers(0, 59), st.integers(0, 59)).map(
    lambda t: f"{t[0]} day{'s' if t[0] > 1 else ''}, {t[1]:02d}:{t[2]:02d}:{t[3]:02d}"
)


@st.composite
def text_neighbors(draw: st.DrawFn) -> LldpNeighbor:
    """Records the text format can carry (ids always with a subtype, values without edge whitespace)."""
    descr = draw(st.none() | st.tuples(_LINE, st.lists(_CONT, max_size=3)))
    caps = draw(st.lists(st.sampled_from(CAPS), unique=True))
    port_id = draw(st.none() | _WORD)
    return LldpNeighbor(
        local_port=draw(_IFNAME),
        via=draw(st.sampled_from(["LLDP", "CDPv2", "EDP"])),
        age=draw(_AGE),
        chassis_id=draw(_WORD),
        chassis_id_type=draw(st.sampled_from(ID_SUBTYPES)),
        system_name=draw(st.none() | _WORD),
        system_descr=None if descr is None else "\n".join([descr[0], *descr[1]]),
        mgmt_ips=tuple(draw(st.lists(st.ip_addresses().map(str), max_size=3))),
        capabilities_enabled=tuple(c for c in CAPS if c in caps),
        port_id=port_id,
        port_id_type=None if port_id is None else draw(st.sampled_from(ID_SUBTYPES)),
        port_descr=draw(st.none() | _LINE),
        ttl=draw(st.none() | st.integers(0, 65535)),
        mfs=draw(st.none() | st.integers(0, 65535)),
    )


@_SETTINGS
@given(st.lists(text_neighbors(), max_size=4).map(tuple))
def test_writer_round_trip(neighbors: tuple[LldpNeighbor, ...]) -> None:
    text = to_text(neighbors)
    assert lldpctl_text.parse_details(text) == neighbors
    assert lldpctl_text.parse(text) == tuple(neighbor_from_lldpd(nb) for nb in neighbors)


@_SETTINGS
@given(st.text(max_size=300))
def test_random_text_raises_only_parse_error(text: str) -> None:
    for prefix in ("", "LLDP neighbors:\n", "LLDP neighbors:\nInterface:    eth0, via: LLDP\n"):
        try:
            result = lldpctl_text.parse_details(prefix + text, "t")
        except ParseError as err:
            assert err.source == "t" and err.expected
            continue
        assert all(isinstance(nb, LldpNeighbor) for nb in result)


def test_prompt_lines_around_the_output_are_ignored() -> None:
    text = (
        "cumulus@switch:~$ sudo lldpcli show neighbors\n"
        f"{SEP}\nLLDP neighbors:\n{SEP}\n"
        "Interface:    swp1, via: LLDP, RID: 10, Time: 0 day, 17:08:27\n"
        "  Chassis:\n    SysName:      MSP-1\n"
        "  Port:\n    PortID:       ifname swp1\n"
        f"{SEP}\n"
        "cumulus@switch:~$\n"
    )
    (nb,) = lldpctl_text.parse(text, "t")
    assert (nb.local_port, nb.system_name, nb.port_id) == ("swp1", "MSP-1", "swp1")


# --- partial reading and pasted captures -------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "pattern", "bad"),
    [
        (UBUNTU, "    Capability:   Router, on", "    Capability:   Router, maybe"),
        (HOST_TXT, "    TTL:          120", "    TTL:          2m"),
    ],
)
def test_bad_line_costs_that_neighbour(samples: Path, sample: str, pattern: str, bad: str) -> None:
    text = read(samples, sample)
    whole = lldpctl_text.parse_details(text, "t")
    lines = text.split("\n")
    i = lines.index(pattern)
    lines[i] = bad
    broken = "\n".join(lines)
    with pytest.raises(ParseError) as info:
        lldpctl_text.parse_details(broken, "t")
    assert info.value.line == i + 1
    log = ParseProblems("t")
    got = lldpctl_text.parse_details(broken, "t", log)
    (problem,) = log.problems
    victim = next(nb for nb in whole if f"on {nb.local_port} " in problem.skipped)
    assert problem.line == i + 1 and problem.source == "t"
    assert len(whole) > 1 and got == tuple(nb for nb in whole if nb is not victim)


def test_bad_interface_line_costs_its_indented_lines(samples: Path) -> None:
    text = read(samples, UBUNTU)
    whole = lldpctl_text.parse_details(text, "t")
    broken = text.replace("Interface:    eth1, via", "Interfaz:    eth1, via", 1)
    log = ParseProblems("t")
    got = lldpctl_text.parse_details(broken, "t", log)
    (problem,) = log.problems
    assert problem.line == 4 and "Interface:" in problem.expected
    assert got == tuple(nb for nb in whole if nb.local_port != "eth1")


def test_every_neighbour_bad_still_raises() -> None:
    raw = "LLDP neighbors:\nInterface:    eth0, via: LLDP\n  Port:\n    TTL:          2m\n"
    with pytest.raises(ParseError, match="unsigned integer for ttl"):
        lldpctl_text.parse_details(raw, "t", ParseProblems("t"))


def test_pasted_runs_with_prompts_blank_lines_and_collapsed_padding(samples: Path) -> None:
    """Two ``lldpctl <if>`` runs pasted one after the other, each with its dashed rules and header."""
    text = read(samples, HOST_TXT)
    whole = lldpctl_text.parse_details(text, "t")
    blocks = text.split("Interface:")
    head = blocks[0]
    runs = [f"{head}Interface:{b.rstrip()}" + ("" if b.rstrip().endswith("-" * 20) else "\n" + SEP) for b in blocks[1:]]
    pasted = (
        "".join(f"# lldpctl run {i}\nroot@h1:~# lldpctl\n\n{run}\n\n" for i, run in enumerate(runs)) + "root@h1:~#\n"
    )
    assert lldpctl_text.parse_details(pasted, "t") == whole
    collapsed = "\n".join(
        line[: len(line) - len(line.lstrip())] + " ".join(line.split()) if line.strip() else line
        for line in text.split("\n")
    )
    assert lldpctl_text.parse_details(collapsed, "t") == whole
