"""nvue: ``nv config show -o yaml`` resolved per interface (+ render), and the ``nv show`` QoS outputs.

No real ``nv config show -o yaml`` capture exists: the two configurations in ``golden/`` are
RECONSTRUCTED from the NVUE docs' command set (see their header comments). The ``nv show`` samples
are vendor documentation examples; the tests check that the RoCE defaults this module holds as data
equal what ``nv show qos roce`` prints, and that the doc's QoS example commands resolve to what the
doc's ``nv show`` outputs print.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.switch import nvue
from unifab.parse.switch.nvue import (
    NvueEcn,
    NvueRoceClass,
    NvueScheduler,
    expand_interfaces,
    parse,
    parse_show_congestion_control,
    parse_show_pfc,
    parse_show_pfc_watchdog,
    parse_show_roce,
    parse_show_roce_counters,
    size_bytes,
)

GOLDEN = Path(__file__).parent / "golden"
DOCS = Path("vendor-docs")
ROCE_LEAF = GOLDEN / "nvue_roce_leaf_reconstructed.yaml"
DOC_EXAMPLES = GOLDEN / "nvue_qos_doc_examples_reconstructed.yaml"
SHOW_ROCE_512 = "nvue_nv_show_qos_roce.txt"
SHOW_STATUS_512 = "nvue_nv_show_interface_qos_roce_status.txt"
SHOW_ROCE_516 = "nvue_show_qos_roce.txt"
SHOW_PFC_ECN_WD = "nvue_qos_pfc_ecn_pfcwd_show.txt"

ROCE_DSCP = {d: d >> 3 for d in range(64)}
ROCE_SP_TO_TC = {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}
ROCE_SCHEDULERS = {0: NvueScheduler("dwrr", 50), 3: NvueScheduler("dwrr", 50), 6: NvueScheduler("strict", None)}
ECN_DEFAULT = NvueEcn(enabled=True, min_bytes=150000, max_bytes=1500000, probability=100, red_enabled=False)


def read(samples: Path, name: str) -> str:
    return (samples / DOCS / name).read_text()


def commands(text: str) -> dict[str, str]:
    """Split a sample holding several commands into ``{"nv show ...": prompt line + output}``."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.split("\n"):
        prompt = re.match(r"\S+@\S+:\S*\$ (.*?)\s*$", line)
        if line.startswith("#####") or prompt:
            current = None
            if prompt and prompt.group(1).startswith("nv show"):
                current = prompt.group(1)
                out[current] = [line]
            continue
        if current is not None:
            out[current].append(line)
    return {cmd: "\n".join(lines) + "\n" for cmd, lines in out.items()}


def config(body: dict[str, Any], version: str = "Cumulus Linux 5.16.0") -> str:
    return yaml.safe_dump(
        [{"header": {"nvue-api-version": "nvue_v1", "rev-id": 1.0, "version": version}}, {"set": body}]
    )


def swp(**extra: Any) -> dict[str, Any]:
    return {"type": "swp", **extra}


def json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
        max_leaves=8,
    )


@st.composite
def mutations(draw: st.DrawFn, source: str) -> str:
    """Truncated, line-shuffled, spliced or cut versions of ``source``, or random noise."""
    op = draw(st.sampled_from(["truncate", "shuffle", "splice", "cut", "noise"]))
    if op == "truncate":
        return source[: draw(st.integers(0, len(source)))]
    if op == "shuffle":
        return "\n".join(draw(st.permutations(source.split("\n"))))
    if op == "splice":
        i = draw(st.integers(0, len(source)))
        return source[:i] + draw(st.text(alphabet="{}[]:,-'0123456789 \n=x%", max_size=4)) + source[i + 1 :]
    if op == "cut":
        i, j = sorted(draw(st.lists(st.integers(0, len(source)), min_size=2, max_size=2)))
        return source[:i] + source[j:]
    return draw(st.text(max_size=200))


# --- reconstructed configurations ----------------------------------------------------------------------


def test_roce_leaf(golden: Any) -> None:
    cfg = parse(ROCE_LEAF.read_text(), ROCE_LEAF.name)
    assert (cfg.version, cfg.hostname, cfg.roce_enabled, cfg.roce_mode) == (
        "Cumulus Linux 5.16.0",
        "leaf01",
        True,
        "lossless-single-ipool",
    )
    assert (cfg.pfcwd_polling_interval_ms, cfg.pfcwd_robustness) == (200, 5)
    assert list(cfg.interfaces) == [f"swp{n}" for n in range(1, 65)]  # eth0 and lo are not switch ports
    down, up = cfg.interfaces["swp1"], cfg.interfaces["swp33"]
    assert (down.mtu, down.speed_mbps, up.speed_mbps) == (9216, 400000, 800000)
    for port in (down, up):  # everything below is a RoCE default: the config says nothing about it
        assert port.trust == "both"
        assert port.dscp_to_tc == ROCE_DSCP
        assert (port.dscp_to_tc[26], port.dscp_to_tc[48]) == (3, 6)
        assert port.tc_to_queue == ROCE_SP_TO_TC
        assert port.pfc_enabled == frozenset({3})
        assert (port.pfc_rx, port.pfc_tx, port.pfc_cable_length_m) == (True, True, 100)
        assert port.schedulers == ROCE_SCHEDULERS
        assert port.pfcwd is True
    assert down.ecn == {0: ECN_DEFAULT, 3: ECN_DEFAULT}
    # the uplink profile configures TC3 only: its thresholds, the per-field defaults, no ECN on TC0
    assert up.congestion_control_profile == "uplink-ecn"
    assert up.ecn == {3: dataclasses.replace(ECN_DEFAULT, min_bytes=300000, max_bytes=3000000)}
    golden(
        GOLDEN / "nvue_roce_leaf_reconstructed.json",
        {**dataclasses.asdict(cfg), "interfaces": {"swp1": down, "swp33": up}},
    )


def test_doc_examples(golden: Any) -> None:
    cfg = parse(DOC_EXAMPLES.read_text(), DOC_EXAMPLES.name)
    assert not cfg.roce_enabled and cfg.roce_mode is None
    assert list(cfg.interfaces) == [f"swp{n}" for n in range(1, 8)]
    swp1, swp5, swp7 = cfg.interfaces["swp1"], cfg.interfaces["swp5"], cfg.interfaces["swp7"]
    # swp1 is named by two keys ("swp1" and "swp1-4,swp6"): both bodies apply
    assert (swp1.pfcwd, swp1.pfc_profile, swp1.pfc_enabled) == (True, "my_pfc_ports", frozenset({3, 5}))
    assert (swp1.pfc_rx, swp1.pfc_tx, swp1.pfc_cable_length_m) == (True, True, 10)  # profile defaults
    assert [cfg.interfaces[f"swp{n}"].pfc_profile for n in range(1, 8)] == ["my_pfc_ports"] * 4 + [
        "default-global",
        "my_pfc_ports",
        "default-global",
    ]
    assert (swp5.pfc_enabled, swp5.pfc_rx, swp5.pfc_tx, swp5.pfc_cable_length_m) == (frozenset({0}), False, True, 50)
    assert swp5.mtu == 9000 and swp5.pfcwd is False
    assert swp1.trust == "l3"
    assert swp1.dscp_to_tc == {**{d: d >> 3 for d in range(64)}, 22: 4}
    assert swp1.pcp_to_tc == {p: p for p in range(8)}
    assert swp1.tc_to_queue == {0: 0, 1: 1, 2: 7, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}
    red = NvueEcn(enabled=True, min_bytes=40000, max_bytes=200000, probability=100, red_enabled=True)
    assert swp1.ecn == {4: red, 5: red, 7: red}  # TC0's default ECN is gone once traffic classes are set
    strict = NvueScheduler("strict", None)
    assert swp1.schedulers == {
        0: strict,
        1: strict,
        2: NvueScheduler("dwrr", 30),
        3: NvueScheduler("dwrr", 20),
        4: NvueScheduler("dwrr", 20),
        5: strict,
        6: NvueScheduler("dwrr", 30),
        7: strict,
    }
    assert swp7.schedulers == {2: NvueScheduler("dwrr", 50), 5: NvueScheduler("dwrr", 50), 6: strict}
    golden(GOLDEN / "nvue_qos_doc_examples_reconstructed.json", cfg)


def test_roce_defaults_equal_nv_show_qos_roce(samples: Path) -> None:
    """The RoCE defaults held as data resolve to exactly what the doc's `nv show qos roce` prints."""
    shown = parse_show_roce(read(samples, SHOW_ROCE_512), SHOW_ROCE_512)
    port = parse(ROCE_LEAF.read_text()).interfaces["swp1"]
    assert shown.mode == "lossless-single-ipool"
    assert shown.trust == port.trust
    assert shown.dscp_to_tc == port.dscp_to_tc
    assert shown.pcp_to_tc == port.pcp_to_tc
    assert shown.tc_to_queue == port.tc_to_queue
    assert shown.schedulers == port.schedulers
    assert shown.pfc_enabled == port.pfc_enabled
    assert (shown.pfc_rx_enabled, shown.pfc_tx_enabled, shown.pfc_cable_length_m) == (
        port.pfc_rx,
        port.pfc_tx,
        port.pfc_cable_length_m,
    )
    assert set(shown.ecn) == set(port.ecn)
    for tc, ecn in shown.ecn.items():
        cfg = port.ecn[tc]
        assert ecn.probability == cfg.probability
        assert ecn.min_bytes is not None and cfg.min_bytes is not None
        assert ecn.max_bytes is not None and cfg.max_bytes is not None
        assert abs(ecn.min_bytes - cfg.min_bytes) <= 0.005 * 1024 + 1  # printed 146.48 KB
        assert abs(ecn.max_bytes - cfg.max_bytes) <= 0.005 * 1024**2 + 1  # printed 1.43 MB


def test_roce_lossless_port_equals_nv_show_interface_status(samples: Path) -> None:
    shown = parse_show_roce(read(samples, SHOW_STATUS_512), SHOW_STATUS_512)
    port = parse(config({"qos": {"roce": {"enable": True}}, "interface": {"swp16": swp()}})).interfaces["swp16"]
    assert shown.mode == "lossless"
    for name in ("roce", "cnp"):
        cls = shown.classes[name]
        assert cls.switch_priority is not None and cls.dscp is not None and cls.pcp is not None
        assert port.dscp_to_tc[cls.dscp] == cls.switch_priority
        assert port.pcp_to_tc[cls.pcp] == cls.switch_priority
        assert cls.traffic_class is not None
        assert port.tc_to_queue[cls.switch_priority] == cls.traffic_class
        assert port.schedulers[cls.traffic_class] == cls.scheduler
    assert shown.pfc_enabled == port.pfc_enabled and shown.trust == port.trust
    # the port view prints the ASIC-programmed minimum (153.00 KB), not the configured 150000 B
    assert shown.ecn[3].min_bytes == 156672


def test_doc_example_config_equals_its_nv_show_outputs(samples: Path) -> None:
    outputs = commands(read(samples, SHOW_PFC_ECN_WD))
    swp5 = parse(DOC_EXAMPLES.read_text()).interfaces["swp5"]  # uses the default-global profiles
    pfc = parse_show_pfc(outputs["nv show qos pfc default-global"])
    assert pfc.switch_priorities == swp5.pfc_enabled
    assert (pfc.rx_enabled, pfc.tx_enabled, pfc.cable_length_m) == (swp5.pfc_rx, swp5.pfc_tx, swp5.pfc_cable_length_m)
    ecn = parse_show_congestion_control(outputs["nv show qos congestion-control default-global"])
    assert ecn.ecn == swp5.ecn


# --- show outputs ------------------------------------------------------------------------------------------


def test_show_qos_roce_512(samples: Path, golden: Any) -> None:
    shown = parse_show_roce(read(samples, SHOW_ROCE_512), SHOW_ROCE_512)
    assert (shown.enabled, shown.mode, shown.trust, shown.congestion_mode) == (
        True,
        "lossless-single-ipool",
        "both",
        "ECN",
    )
    assert shown.ecn[3].min_bytes == 149996  # 146.48 KB
    assert shown.ecn[3].max_bytes == 1499464  # 1.43 MB
    assert (shown.lldp_app_priority, shown.lldp_app_protocol_id, shown.lldp_app_selector) == (3, 4791, "UDP")
    assert [p.name for p in shown.pools] == ["lossy-default-ingress", "lossy-default-egress", "roce-reserved-egress"]
    assert shown.pools[0].size_percent == 100 and shown.pools[2].size_infinite
    assert shown.exceptions == () and shown.classes == {}
    golden(GOLDEN / "nvue_nv_show_qos_roce.json", shown)


def test_show_interface_roce_status_512(samples: Path, golden: Any) -> None:
    shown = parse_show_roce(read(samples, SHOW_STATUS_512), SHOW_STATUS_512)
    assert shown.enabled is None and shown.congestion_mode == "ecn, absolute"
    assert shown.classes == {
        "cnp": NvueRoceClass("cnp", 6, 48, 6, 6, NvueScheduler("strict", None)),
        "roce": NvueRoceClass("roce", 3, 26, 3, 3, NvueScheduler("dwrr", 50)),
    }
    pool = shown.pools[1]
    assert (pool.name, pool.pool_id, pool.size_bytes, pool.current_usage_bytes, pool.max_usage_bytes) == (
        "roce-reserved-ingress",
        3,
        15896412,  # 15.16 MB
        7654605,  # 7.30 MB
        8283750,  # 7.90 MB
    )
    assert shown.pools[0].current_usage_bytes == 0  # "0 Bytes"
    golden(GOLDEN / "nvue_nv_show_interface_qos_roce_status.json", shown)


def test_show_roce_516_sample(samples: Path, golden: Any) -> None:
    outputs = commands(read(samples, SHOW_ROCE_516))
    assert list(outputs) == [
        "nv show qos roce",
        "nv show interface swp16 qos roce status",
        "nv show interface swp16 qos roce counters",
    ]
    glob = parse_show_roce(outputs["nv show qos roce"])
    status = parse_show_roce(outputs["nv show interface swp16 qos roce status"])
    # 5.16 prints "state enabled" where 5.12 printed "enable on"; the rest reads the same
    assert glob == parse_show_roce(read(samples, SHOW_ROCE_512))
    assert status == parse_show_roce(read(samples, SHOW_STATUS_512))
    counters = parse_show_roce_counters(outputs["nv show interface swp16 qos roce counters"])
    c = counters.counters
    assert c["tx-stats.tx-ecn-stats.ecn-marked-packets"] == 693777677344
    assert c["rx-stats.rx-non-roce-stats.buffer-max-usage"] == 144  # "144 Bytes"
    assert c["tx-stats.tx-roce-stats.buffer-max-usage"] == 14124319  # "13.47 MB"
    assert c["tx-stats.tx-roce-stats.roce-bytes"] == 99669419092869  # "92824.38 GB"
    assert c["rx-stats.rx-pfc-stats.pause-packets"] == 0
    assert len(c) == 33
    golden(GOLDEN / "nvue_show_interface_qos_roce_counters.json", counters)


def test_show_pfc_ecn_pfcwd_sample(samples: Path, golden: Any) -> None:
    outputs = commands(read(samples, SHOW_PFC_ECN_WD))
    pfc = parse_show_pfc(outputs["nv show qos pfc default-global"])
    assert (pfc.switch_priorities, pfc.rx_enabled, pfc.tx_enabled, pfc.cable_length_m) == (
        frozenset({0}),
        False,
        True,
        50,
    )
    assert (pfc.port_buffer_bytes, pfc.xoff_threshold_bytes, pfc.xon_threshold_bytes) == (25000, 10000, 2000)
    wd = parse_show_pfc_watchdog(outputs["nv show interface swp1 qos pfc-watchdog"])
    assert wd.enabled is True
    assert {tc: (c.status, c.deadlock_count) for tc, c in wd.traffic_classes.items() if c.status != "OK"} == {
        2: ("DEADLOCK", 2),
        7: ("DEADLOCK", 3),
    }
    assert wd.traffic_classes[1].deadlock_count == 3
    ecn = parse_show_congestion_control(outputs["nv show qos congestion-control default-global"])
    assert set(ecn.ecn) == {4, 5, 7}
    golden(GOLDEN / "nvue_qos_pfc_ecn_pfcwd_show.json", {"pfc": pfc, "pfc_watchdog": wd, "congestion_control": ecn})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("146.48 KB", 149996),
        ("1.43 MB", 1499464),
        ("153.00 KB", 156672),
        ("25000 B", 25000),
        ("0 Bytes", 0),
        ("16.00 MB", 16777216),
        ("92824.38 GB", 99669419092869),
        ("1 TB", 1024**4),
        ("inf", None),
        ("100%", None),
        ("1.5 kb", None),
    ],
)
def test_size_bytes_binary_units(text: str, expected: int | None) -> None:
    assert size_bytes(text) == expected


def test_show_lossy_multi_tc_example_with_dash_cells_and_features() -> None:
    """The 5.16 page's lossy-multi-tc example: '-' for no DSCP, an overflowing column, extended features."""
    text = "\n".join(
        [
            "cumulus@switch:~$ nv show qos roce",
            "                    operational            applied",
            "------------------  --------------         --------------",
            "state                                      enabled",
            "mode                lossless-single-ipool  lossless-single-ipool",
            "",
            "RoCE PCP/DSCP->SP mapping configurations",
            "===========================================",
            "       pcp  dscp                        switch-prio",
            "    -  ---  --------------------------  -----------",
            "    0  0    0,7,8,9,10,51,52,53,54,55,56,57,58,59,60,61,62,63            0",
            "    1  1    1,2                         1",
            "    6  6    -                           6",
            "",
            "RoCE SP->TC mapping and ETS configurations",
            "=============================================",
            "       switch-prio  traffic-class  scheduler-weight",
            "    -  -----------  -------------  ----------------",
            "    0  0            0              DWRR-4%",
            "    7  7            7              DWRR-0%",
            "",
            "Extended Features",
            "====================",
            "    Feature      Status",
            "    -----------  -------",
            "    packet-trim  enabled",
            "",
        ]
    )
    shown = parse_show_roce(text)
    assert shown.mode == "lossless-single-ipool"
    assert shown.dscp_to_tc[63] == 0 and shown.dscp_to_tc[2] == 1 and 48 not in shown.dscp_to_tc
    assert shown.pcp_to_tc == {0: 0, 1: 1, 6: 6}
    assert shown.schedulers == {0: NvueScheduler("dwrr", 4), 7: NvueScheduler("dwrr", 0)}
    assert shown.features == {"packet-trim": "enabled"}


def test_show_multi_value_collection_rows() -> None:
    text = "\n".join(
        [
            "                   operational  applied  description",
            "-----------------  -----------  -------  --------------------------------",
            "cable-length       100          100      Cable Length (in meters)",
            "[switch-priority]  3            3        Collection of switch priorities.",
            "[switch-priority]  4            4",
        ]
    )
    assert parse_show_pfc(text).switch_priorities == frozenset({3, 4})


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("", None, "empty"),
        ("\n  \n", None, "empty"),
        ("enable  on\n", 1, "header"),
        ("a  b\n----  ----\ncumulus@sw:~$ nv show qos roce\n", 3, "one command"),
        ("    operational  applied\n------  -----------  -------\npfc\n  pfc-priority      x\n", 4, "pfc-priority"),
        (
            "    operational  applied\n------  -----------  -------\n\nT\n====\n    a  b\n    -  -\n    1  2\nstray\n",
            9,
            "table title",
        ),
        ("  x  y\n  ----  ----\n          1\n", 3, "key in the first column"),
    ],
)
def test_show_errors_name_the_line(text: str, line: int | None, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_show_roce(text, "show.txt")
    assert info.value.source == "show.txt"
    assert info.value.line == line
    assert expected in info.value.expected


def test_show_congestion_control_bad_cell() -> None:
    text = (
        "    operational  applied\n--  -----------  -------\n\nECN Configurations\n=====\n"
        "    traffic-class  ECN     RED     Min Th   Max Th    Probability\n"
        "    -------------  ------  ------  -------  --------  -----------\n"
        "    4              enable  maybe   40000 B  200000 B  100\n"
    )
    with pytest.raises(ParseError) as info:
        parse_show_congestion_control(text)
    assert info.value.line == 8 and "RED" in info.value.expected


# --- configuration variants --------------------------------------------------------------------------------


def test_api_revision_object_and_header_set_dict() -> None:
    body = {"interface": {"swp1": swp(link={"mtu": 9000})}, "system": {"hostname": "leaf9"}}
    from_list = parse(config(body))
    from_api = parse(yaml.safe_dump(body))  # GET /nvue_v1/?rev=applied
    from_dict = parse(yaml.safe_dump({"header": {"version": "Cumulus Linux 5.16.0"}, "set": body}))
    assert from_api == dataclasses.replace(from_list, version=None)
    assert from_dict == from_list
    assert from_list.hostname == "leaf9" and from_list.interfaces["swp1"].mtu == 9000


def test_set_items_merge_in_order() -> None:
    text = (
        "- header:\n    version: Cumulus Linux 5.12.0\n"
        "- set:\n    interface:\n      swp1:\n        type: swp\n        link:\n          mtu: 9000\n"
        "- set:\n    interface:\n      swp1:\n        link:\n          speed: 100G\n"
        "    qos:\n      roce:\n        enable: on\n"
    )
    cfg = parse(text)
    port = cfg.interfaces["swp1"]
    assert (port.mtu, port.speed_mbps, cfg.roce_mode) == (9000, 100000, "lossless")


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("swp1-4,swp6", ["swp1", "swp2", "swp3", "swp4", "swp6"]),
        ("swp2,6", ["swp2", "swp6"]),
        ("swp1s0-3", ["swp1s0", "swp1s1", "swp1s2", "swp1s3"]),
        ("swp10", ["swp10"]),
        ("swp1,3-4", ["swp1", "swp3", "swp4"]),
        ("lo", ["lo"]),
    ],
)
def test_expand_interfaces(spec: str, names: list[str]) -> None:
    assert expand_interfaces(spec) == names


@pytest.mark.parametrize("spec", ["swp4-1", "", "swp1,,swp2", "3-4", "swp0-99999"])
def test_expand_interfaces_rejects(spec: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        expand_interfaces(spec)


def test_numeric_keys_ranges_and_yaml_booleans() -> None:
    text = """\
- set:
    interface:
      swp1-2:
        type: swp
    qos:
      roce:
        enable: on
        mode: lossless
      mapping:
        default-global:
          dscp:
            24,26:
              switch-priority: 2
            46:
              switch-priority: 5
      egress-queue-mapping:
        default-global:
          switch-priority:
            2:
              traffic-class: 3
      pfc:
        default-global:
          switch-priority: 2
          rx: off
"""
    port = parse(text).interfaces["swp2"]
    assert (port.dscp_to_tc[24], port.dscp_to_tc[26], port.dscp_to_tc[46], port.dscp_to_tc[25]) == (2, 2, 5, 3)
    assert port.tc_to_queue[2] == 3 and port.tc_to_queue[3] == 3
    assert port.pfc_enabled == frozenset({2})
    assert (port.pfc_rx, port.pfc_tx, port.pfc_cable_length_m) == (False, True, 100)  # RoCE fills tx and cable


@pytest.mark.parametrize(
    ("roce", "enabled", "mode"),
    [
        ({}, True, "lossless"),  # `nv set qos roce`
        ({"enable": "on"}, True, "lossless"),
        ({"state": "enabled", "mode": "lossy"}, True, "lossy"),
        ({"enable": False, "mode": "lossy"}, False, None),
        ({"state": "disabled"}, False, None),
        (None, True, "lossless"),
    ],
)
def test_roce_switch(roce: dict[str, Any] | None, enabled: bool, mode: str | None) -> None:
    cfg = parse(config({"qos": {"roce": roce}, "interface": {"swp1": swp()}}))
    assert (cfg.roce_enabled, cfg.roce_mode) == (enabled, mode)


def test_lossy_roce_has_no_pfc_and_plain_ports_have_plain_defaults() -> None:
    lossy = parse(config({"qos": {"roce": {"mode": "lossy"}}, "interface": {"swp1": swp()}})).interfaces["swp1"]
    assert lossy.pfc_enabled == frozenset() and lossy.pfc_cable_length_m is None
    assert lossy.ecn == {0: ECN_DEFAULT, 3: ECN_DEFAULT} and lossy.trust == "both"
    plain = parse(config({"interface": {"swp1": swp()}})).interfaces["swp1"]
    assert (plain.trust, plain.mtu, plain.speed_mbps, plain.pfcwd) == ("l2", 9216, None, False)
    assert plain.tc_to_queue == {sp: sp for sp in range(8)}
    assert plain.ecn == {0: ECN_DEFAULT}
    assert plain.schedulers == {tc: NvueScheduler("dwrr", 12 if tc % 2 == 0 else 13) for tc in range(8)}
    assert (plain.pfc_enabled, plain.pfc_rx, plain.pfc_tx, plain.pfc_cable_length_m) == (
        frozenset(),
        False,
        False,
        None,
    )


def test_lossy_multi_tc_dscp_map() -> None:
    port = parse(config({"qos": {"roce": {"mode": "lossy-multi-tc"}}, "interface": {"swp1": swp()}})).interfaces["swp1"]
    assert (port.dscp_to_tc[26], port.dscp_to_tc[5], port.dscp_to_tc[63], port.dscp_to_tc[45]) == (4, 3, 0, 5)
    assert len(port.dscp_to_tc) == 64
    assert port.schedulers[7] == NvueScheduler("dwrr", 0)


def test_pfc_watchdog_state_and_non_swp_interfaces() -> None:
    body = {
        "interface": {
            "swp1": swp(qos={"pfc-watchdog": {"state": "disabled"}}),
            "swp2": swp(qos={"pfc-watchdog": None}),
            "swp3": {"link": {"mtu": 9100}},  # no type, swp name
            "bond1": {"type": "bond"},
            "eth0": {"type": "eth"},
            "vlan10": {"type": "svi"},
        }
    }
    cfg = parse(config(body))
    assert list(cfg.interfaces) == ["swp1", "swp2", "swp3"]
    assert [cfg.interfaces[n].pfcwd for n in cfg.interfaces] == [False, True, False]


@pytest.mark.parametrize(
    ("body", "key", "expected"),
    [
        ({"interface": {"swp1": swp(qos={"pfc": {"profile": "nope"}})}}, "interface.swp1.qos.pfc.profile", "'nope'"),
        ({"interface": {"swp4-1": swp()}}, "interface.swp4-1", "descending"),
        ({"interface": {"swp1": swp(link={"mtu": "jumbo"})}}, "interface.swp1.link.mtu", "MTU"),
        ({"interface": {"swp1": swp(link={"speed": "fast"})}}, "interface.swp1.link.speed", "400G"),
        ({"interface": {"swp1": swp(link={"speed": 400})}}, "interface.swp1.link.speed", "400G"),
        ({"interface": {"swp1": swp(qos={"pfc": {"profile": 3}})}}, "interface.swp1.qos.pfc.profile", "profile name"),
        ({"interface": ["swp1"]}, "interface", "object"),
        ({"qos": {"roce": {"mode": "turbo"}}}, "qos.roce.mode", "lossless"),
        ({"qos": {"roce": {"mode": ["lossless"]}}}, "qos.roce.mode", "lossless"),
        ({"qos": {"roce": {"enable": "maybe"}}}, "qos.roce.enable", "on/off"),
        (
            {"qos": {"mapping": {"default-global": {"trust": "dscp"}}}, "interface": {"swp1": swp()}},
            "qos.mapping.default-global.trust",
            "l3",
        ),
        (
            {
                "qos": {"mapping": {"default-global": {"dscp": {"64": {"switch-priority": 1}}}}},
                "interface": {"swp1": swp()},
            },
            "qos.mapping.default-global.dscp.64",
            "0..63",
        ),
        (
            {"qos": {"mapping": {"default-global": {"dscp": {"26": {"tc": 1}}}}}, "interface": {"swp1": swp()}},
            "qos.mapping.default-global.dscp.26",
            "switch-priority",
        ),
        (
            {"qos": {"pfc": {"default-global": {"switch-priority": {"8": {}}}}}, "interface": {"swp1": swp()}},
            "qos.pfc.default-global.switch-priority.8",
            "0..7",
        ),
        (
            {"qos": {"pfc": {"default-global": {"cable-length": -5}}}, "interface": {"swp1": swp()}},
            "qos.pfc.default-global.cable-length",
            "cable length",
        ),
        (
            {
                "qos": {"congestion-control": {"default-global": {"traffic-class": {"3": {"probability": 101}}}}},
                "interface": {"swp1": swp()},
            },
            "qos.congestion-control.default-global.traffic-class.3.probability",
            "0..100",
        ),
        (
            {
                "qos": {"egress-scheduler": {"default-global": {"traffic-class": {"3": {"mode": "wrr"}}}}},
                "interface": {"swp1": swp()},
            },
            "qos.egress-scheduler.default-global.traffic-class.3.mode",
            "dwrr or strict",
        ),
        ({"qos": {"egress-queue-mapping": {"mine": {}}}}, "qos.egress-queue-mapping.mine", "default-global"),
        ({"qos": {"pfc-watchdog": {"robustness": "x"}}}, "qos.pfc-watchdog.robustness", "polls"),
        ({"qos": {"pfc-watchdog": {"polling-interval": True}}}, "qos.pfc-watchdog.polling-interval", "milliseconds"),
    ],
)
def test_config_errors_name_the_key(body: dict[str, Any], key: str, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(config(body), "startup.yaml")
    assert info.value.source == "startup.yaml"
    assert info.value.key == key
    assert expected in info.value.expected


@pytest.mark.parametrize(
    ("text", "line", "key", "expected"),
    [
        ("", None, None, "empty"),
        ("- set:\n    qos: [\n", 3, None, "YAML"),
        ("- set:\n  a: 1\n b: 2\n", 3, None, "YAML"),
        ("[]", None, None, "header"),
        ("- set: 5\n", None, "[0].set", "configuration object"),
        ("- unset:\n    qos: {}\n", None, "[0]", "'header' or 'set'"),
        ("- header: 1\n", None, "[0].header", "header object"),
        ("- set:\n    ? [a]\n    : 1\n", 2, None, "YAML"),
        ("- set:\n    interface:\n      on: {}\n", None, "[0].set.interface", "name or number"),
        ("a: 2001-13-45\n", None, None, "YAML"),
    ],
)
def test_yaml_errors(text: str, line: int | None, key: str | None, expected: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.line == line
    assert info.value.key == key
    assert expected in info.value.expected


def test_recursive_and_exploding_yaml_aliases_are_parse_errors() -> None:
    with pytest.raises(ParseError, match="levels deep"):
        parse("- set:\n    qos: &a\n      pfc: *a\n")
    laughs = "a0: &a0 {k: v}\n"
    for i in range(1, 12):
        laughs += f"a{i}: &a{i} {{" + ", ".join(f"x{j}: *a{i - 1}" for j in range(10)) + "}\n"
    with pytest.raises(ParseError, match="aliases are expanded"):
        parse(laughs + "qos: *a11\n")


def test_shared_aliases_within_budget_are_read() -> None:
    text = "- set:\n    interface:\n      swp1: &port {type: swp, link: {mtu: 9000}}\n      swp2: *port\n"
    cfg = parse(text)
    assert [p.mtu for p in cfg.interfaces.values()] == [9000, 9000]


# --- fuzzing ------------------------------------------------------------------------------------------------


@settings(max_examples=300)
@given(json_values())
def test_random_yaml_raises_only_parse_error(value: Any) -> None:
    for doc in (value, [{"set": {"qos": value}}], [{"set": {"interface": {"swp1": value}}}], {"qos": {"pfc": value}}):
        with contextlib.suppress(ParseError):
            parse(yaml.safe_dump(doc))


SHOW_PARSERS = [
    parse_show_roce,
    parse_show_pfc,
    parse_show_pfc_watchdog,
    parse_show_congestion_control,
    parse_show_roce_counters,
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([SHOW_ROCE_512, SHOW_STATUS_512]), st.sampled_from(SHOW_PARSERS))
def test_show_mutations_raise_only_parse_error(samples: Path, data: st.DataObject, name: str, parser: Any) -> None:
    with contextlib.suppress(ParseError):
        parser(data.draw(mutations(read(samples, name))))


def test_module_exports() -> None:
    assert set(nvue.__all__) <= set(dir(nvue))
