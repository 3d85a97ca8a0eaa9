"""``ibnetdiscover`` topology file: golden over the ibsim clean/faulty pair, variants, errors, fuzz."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.ib import ibnetdiscover

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("name", ["ibnetdiscover_sim_rail_clean", "ibnetdiscover_sim_rail_faulty"])
def test_golden(samples: Path, golden: Any, name: str) -> None:
    topo = ibnetdiscover.parse((samples / "ib" / f"{name}.txt").read_text(), name)
    golden(GOLDEN / f"{name}.json", {"topology": topo, "links": ibnetdiscover.named_links(topo)})


def _faulty(samples: Path) -> ibnetdiscover.IbTopology:
    return ibnetdiscover.parse((samples / "ib" / "ibnetdiscover_sim_rail_faulty.txt").read_text())


def test_sample_shape(samples: Path) -> None:
    topo = _faulty(samples)
    kinds = [n.kind for n in topo.nodes]
    assert kinds.count("switch") == 12 and kinds.count("ca") == 31  # dgx-004 mlx5_2 is not cabled
    leaf = topo.nodes[0]
    assert (leaf.name, leaf.guid, leaf.nports, leaf.lid, leaf.devid) == (
        "ib-leaf-r7",
        "0xb83fd20300a10007",
        40,
        11,
        "0xcf08",
    )
    first = leaf.ports[0]
    assert (first.port, first.remote_id, first.remote_port, first.remote_port_guid) == (
        1,
        "H-a088c20300b1000e",
        1,
        "a088c20300b1000f",
    )
    assert (first.remote_description, first.remote_lid, first.width, first.speed, first.rate_mbps) == (
        "dgx-001 mlx5_7",
        20,
        4,
        "HDR",
        200_000,
    )
    ca = topo.nodes[-1]
    assert (ca.kind, ca.name, ca.ports[0].port_guid, ca.ports[0].remote_lid) == ("ca", "dgx-001", "a088c20300b10001", 2)


def test_named_links_show_the_injected_faults(samples: Path) -> None:
    links = {(lk.a_node, lk.a_port): lk for lk in ibnetdiscover.named_links(_faulty(samples))}
    assert len(links) == 31 + 32  # host cables + leaf-spine cables, each once
    assert (links["dgx-003", "mlx5_5"].b_node, links["dgx-003", "mlx5_5"].b_port) == ("ib-leaf-r6", "3")
    assert (links["dgx-003", "mlx5_6"].b_node, links["dgx-003", "mlx5_6"].b_port) == ("ib-leaf-r5", "3")
    assert ("dgx-004", "mlx5_2") not in links
    slow = [lk for lk in links.values() if lk.width != 4]
    assert [(lk.a_node, lk.a_port, lk.width, lk.rate_mbps) for lk in slow] == [("dgx-002", "mlx5_1", 1, 50_000)]


def test_ndr_and_router_variant() -> None:
    text = (
        "switchguid=0x1(1)\n"
        'Switch\t64 "S-01"\t\t# "MF0;sw-ib-01:MQM9700/U1" enhanced port 0 lid 5 lmc 0\n'
        '[7]\t"H-02"[1](03) \t\t# "node7 mlx5_0" lid 9 4xNDR\n'
        "\n"
        "rtguid=0x4\n"
        'Rt\t2 "R-04"\t\t# "router-a"\n'
        '[1]\t"S-01"[9]\t\t# "MF0;sw-ib-01:MQM9700/U1" lid 5 2xNDR\n'
    )
    topo = ibnetdiscover.parse(text)
    assert [n.kind for n in topo.nodes] == ["switch", "router"]
    assert topo.nodes[0].ports[0].rate_mbps == 400_000
    assert topo.nodes[1].ports[0].rate_mbps == 200_000
    assert topo.nodes[1].guid == "0x4"
    named = ibnetdiscover.named_links(topo)
    assert ("node7", "sw-ib-01") in {(lk.a_node, lk.b_node) for lk in named}


def test_link_without_rate_annotation() -> None:
    topo = ibnetdiscover.parse('Ca\t1 "H-01"\n[1](02) \t"S-03"[4]\n')
    port = topo.nodes[0].ports[0]
    assert (port.width, port.speed, port.rate_mbps, port.remote_description) == (None, None, None, None)
    assert ibnetdiscover.named_links(topo)[0].a_node == "H-01"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", 1),
        ("# only a comment\n", 1),
        ('[1]\t"S-01"[2]\n', 1),
        ('Switch\t40 "S-01"\n[1]\t"H-02"[1]\nnonsense here\n', 3),
        ('Switch forty "S-01"\n', 1),
    ],
)
def test_errors_name_the_line(text: str, line: int) -> None:
    with pytest.raises(ParseError) as exc:
        ibnetdiscover.parse(text, "ib/ibnetdiscover.txt")
    assert exc.value.line == line
    assert exc.value.source == "ib/ibnetdiscover.txt"


def test_other_views_are_rejected(samples: Path) -> None:
    for name in ("ibnetdiscover_p_sim_rail_faulty.txt", "ibnetdiscover_l_sim_rail_faulty.txt"):
        with pytest.raises(ParseError) as exc:
            ibnetdiscover.parse((samples / "ib" / name).read_text(), name)
        assert exc.value.line == 1


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.text(alphabet=st.sampled_from(list('[]()"#x0123456789 \tSwitchCaRt-=HDRguidvend\n')), max_size=300))
def test_random_text_raises_only_parse_error(text: str) -> None:
    with contextlib.suppress(ParseError):
        ibnetdiscover.parse(text)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=4000), st.integers(min_value=0, max_value=200))
def test_truncated_sample_raises_only_parse_error(cut: int, drop: int) -> None:
    from tests.conftest import SAMPLES

    text = (SAMPLES / "ib" / "ibnetdiscover_sim_rail_faulty.txt").read_text()
    chopped = text[:cut] + text[cut + drop :]
    try:
        topo = ibnetdiscover.parse(chopped)
    except ParseError:
        return
    ibnetdiscover.named_links(topo)
