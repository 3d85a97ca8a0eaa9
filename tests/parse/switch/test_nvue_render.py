"""NVUE configuration rendering: ``dump`` round-trips the samples and random documents, groups port ranges, and
refuses what NVUE cannot express (split from test_nvue.py, which reads)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import UsageError
from unifab.parse.switch import nvue
from unifab.parse.switch.nvue import (
    NvueConfig,
    dump,
    parse,
)

GOLDEN = Path(__file__).parent / "golden"
ROCE_LEAF = GOLDEN / "nvue_roce_leaf_reconstructed.yaml"
DOC_EXAMPLES = GOLDEN / "nvue_qos_doc_examples_reconstructed.yaml"


# --- render -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [ROCE_LEAF, DOC_EXAMPLES], ids=lambda p: p.name)
def test_render_round_trip_samples(path: Path) -> None:
    cfg = parse(path.read_text())
    text = dump(cfg)
    assert parse(text) == cfg
    assert dump(parse(text)) == text


def test_render_groups_ranges_and_writes_roce() -> None:
    cfg = parse(ROCE_LEAF.read_text())
    doc = yaml.safe_load(dump(cfg))
    body = doc[1]["set"]
    assert set(body["interface"]) == {"swp1-32", "swp33-64"}
    assert body["qos"]["roce"] == {"enable": True, "mode": "lossless-single-ipool"}
    assert body["interface"]["swp33-64"]["qos"]["congestion-control"] == {"profile": "uplink-ecn"}
    assert doc[0]["header"]["version"] == "Cumulus Linux 5.16.0"


def test_render_refuses_what_nvue_cannot_say() -> None:
    cfg = parse(DOC_EXAMPLES.read_text())
    one = cfg.interfaces["swp1"]
    clash = dataclasses.replace(cfg.interfaces["swp2"], pfc_enabled=frozenset({1}))
    with pytest.raises(UsageError, match="my_pfc_ports"):
        dump(dataclasses.replace(cfg, interfaces={"swp1": one, "swp2": clash}))
    remapped = dataclasses.replace(cfg.interfaces["swp2"], tc_to_queue=dict.fromkeys(range(8), 0))
    with pytest.raises(UsageError, match="tc_to_queue"):
        dump(dataclasses.replace(cfg, interfaces={"swp1": one, "swp2": remapped}))
    with pytest.raises(UsageError, match="RoCE mode"):
        dump(dataclasses.replace(cfg, roce_enabled=True, roce_mode="turbo"))


PROFILES = ("default-global", "p1", "p2")
FLAGS = st.sampled_from([True, False, "enable", "disable"])


@st.composite
def nvue_documents(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Random but valid NVUE configurations, as the YAML document a switch prints."""
    qos: dict[str, Any] = {}
    if draw(st.booleans()):
        roce: dict[str, Any] = {}
        if draw(st.booleans()):
            roce["enable"] = draw(st.booleans())
        if draw(st.booleans()):
            roce["mode"] = draw(st.sampled_from(nvue.ROCE_MODES))
        qos["roce"] = roce
    defined: dict[str, list[str]] = {}

    def profiles(kind: str, body: st.SearchStrategy[dict[str, Any]]) -> None:
        names = draw(st.lists(st.sampled_from(PROFILES), unique=True, max_size=3))
        if names:
            qos[kind] = {name: draw(body) for name in names}
        defined[kind] = names

    sp_map = st.dictionaries(st.integers(0, 7), st.integers(0, 7), max_size=3)
    profiles(
        "mapping",
        st.fixed_dictionaries(
            {},
            optional={
                "trust": st.sampled_from(nvue.TRUSTS),
                "dscp": st.dictionaries(
                    st.integers(0, 63).map(str),
                    st.builds(lambda sp: {"switch-priority": sp}, st.integers(0, 7)),
                    max_size=4,
                ),
                "pcp": sp_map.map(lambda m: {str(k): {"switch-priority": v} for k, v in m.items()}),
                "port-default-sp": st.integers(0, 7),
            },
        ),
    )
    profiles(
        "pfc",
        st.fixed_dictionaries(
            {},
            optional={
                "switch-priority": st.sets(st.integers(0, 7)).map(lambda s: {str(x): {} for x in s}),
                "rx": FLAGS,
                "tx": FLAGS,
                "cable-length": st.integers(1, 300),
            },
        ),
    )
    ecn_fields = st.fixed_dictionaries(
        {},
        optional={
            "ecn": FLAGS,
            "red": FLAGS,
            "min-threshold": st.integers(0, 10**7),
            "max-threshold": st.integers(0, 10**7),
            "probability": st.integers(0, 100),
        },
    )
    profiles(
        "congestion-control",
        st.fixed_dictionaries(
            {}, optional={"traffic-class": st.dictionaries(st.integers(0, 7).map(str), ecn_fields, max_size=3)}
        ),
    )
    sched_fields = st.fixed_dictionaries(
        {}, optional={"mode": st.sampled_from(["dwrr", "strict"]), "bw-percent": st.integers(0, 100)}
    )
    profiles(
        "egress-scheduler",
        st.fixed_dictionaries(
            {}, optional={"traffic-class": st.dictionaries(st.integers(0, 7).map(str), sched_fields, max_size=3)}
        ),
    )
    if draw(st.booleans()):
        qos["egress-queue-mapping"] = {
            "default-global": {"switch-priority": {str(k): {"traffic-class": v} for k, v in draw(sp_map).items()}}
        }
    if draw(st.booleans()):
        qos["pfc-watchdog"] = draw(
            st.fixed_dictionaries(
                {}, optional={"polling-interval": st.integers(10, 1000), "robustness": st.integers(1, 10)}
            )
        )
    interfaces: dict[str, Any] = {}
    for n in draw(st.lists(st.integers(1, 40), unique=True, max_size=6)):
        body: dict[str, Any] = {"type": "swp"}
        link = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "mtu": st.integers(1500, 9216),
                    "speed": st.sampled_from(["auto", "10G", "100G", "400G", "800G", "100M"]),
                },
            )
        )
        if link:
            body["link"] = link
        iq: dict[str, Any] = {}
        for kind in ("mapping", "pfc", "congestion-control", "egress-scheduler"):
            choice = draw(st.sampled_from(["default-global", *[p for p in defined[kind] if p != "default-global"]]))
            if choice != "default-global" or draw(st.booleans()):
                iq[kind] = {"profile": choice}
        if draw(st.booleans()):
            iq["pfc-watchdog"] = draw(st.sampled_from([{}, {"state": "enabled"}, {"state": "disabled"}]))
        if iq:
            body["qos"] = iq
        interfaces[f"swp{n}"] = body
    body_set: dict[str, Any] = {"qos": qos, "interface": interfaces}
    if draw(st.booleans()):
        body_set["system"] = {"hostname": draw(st.sampled_from(["leaf01", "spine-2", "on", "10.0.0.1"]))}
    return [{"header": {"version": draw(st.sampled_from(["Cumulus Linux 5.16.0", "5.12"]))}}, {"set": body_set}]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(nvue_documents())
def test_render_round_trip_property(document: list[dict[str, Any]]) -> None:
    cfg = parse(yaml.safe_dump(document))
    assert parse(dump(cfg)) == cfg


def test_render_empty_config() -> None:
    cfg = NvueConfig(None, None, False, None, 100, 3, {})
    assert parse(dump(cfg)) == cfg
