"""Tests for the NCCL topology XML parser: a real NCCL dump, a real NCCL_TOPO_FILE, newer-NCCL shapes, round trip."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host.nccl_topo import NcclTopo, NvLink, TopoCpu, TopoGpu, TopoNic, dump, parse

GoldenCheck = Callable[[Path, object], None]
GOLDEN = Path(__file__).parent / "golden"
A100 = "host/nccl_topo_dump_8xa100_4cx6_bond.xml"
AZURE = "host/nccl_topo_file_azure_ndv5_h100.xml"


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "topo.xml")
    return info.value


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


# --- real samples ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "golden_name"),
    [(A100, "nccl_topo_dump_8xa100_4cx6_bond.json"), (AZURE, "nccl_topo_file_azure_ndv5_h100.json")],
)
def test_golden(samples: Path, golden: GoldenCheck, sample: str, golden_name: str) -> None:
    golden(GOLDEN / golden_name, parse((samples / sample).read_text(), sample))


def test_a100_dump(samples: Path) -> None:
    topo = parse((samples / A100).read_text())
    assert topo.version == 1 and [c.numa for c in topo.cpus] == [0, 1]
    assert [(g.dev, g.rank, g.sm, g.gdr) for g in topo.gpus] == [(i, i, 80, True) for i in range(8)]
    assert [g.numa for g in topo.gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    gpu0 = topo.gpus[0]
    assert (gpu0.busid, gpu0.pci_class, gpu0.pci_switch) == ("0000:13:00.0", "0x030200", "0000:11:00.0")
    assert gpu0.pci_path == ("0000:0c:00.0", "0000:0e:00.0", "0000:11:00.0")
    assert {(n.count, n.tclass) for g in topo.gpus for n in g.nvlinks} == {(2, "0x068000")}  # 6 NVSwitches, 2 links
    assert gpu0.nvlinks[0] == NvLink("0000:c3:00.0", 2, "0x068000") and len(gpu0.nvlinks) == 6
    assert [n.name for n in topo.nics] == [f"mlx5_bond_{i}" for i in range(5)]  # 5 RoCE LAGs, not 4
    assert {(n.speed_mbps, n.port, n.gdr, n.coll, n.pci_class) for n in topo.nics} == {
        (200000, 1, True, None, "0x020000")
    }
    frontend = topo.nics[0]
    assert (frontend.busid, frontend.pci_switch, frontend.pci_path, frontend.guid) == (
        "0000:06:00.0",
        None,
        (),
        "0x1e95b50003fd7010",
    )
    # Rails: two GPUs and one bond NIC behind each top-level switch under the CPU.
    rails = {
        switch: (sorted(g.dev or 0 for g in topo.gpus if g.pci_path[:1] == (switch,)),
                 [n.name for n in topo.nics if n.pci_path[:1] == (switch,)])
        for switch in sorted({g.pci_path[0] for g in topo.gpus})
    }  # fmt: skip
    assert rails == {
        "0000:0c:00.0": ([0, 1], ["mlx5_bond_1"]),
        "0000:41:00.0": ([2, 3], ["mlx5_bond_2"]),
        "0000:82:00.0": ([4, 5], ["mlx5_bond_3"]),
        "0000:a6:00.0": ([6, 7], ["mlx5_bond_4"]),
    }
    assert topo.nics[1].pci_switch == "0000:15:00.0" and topo.gpus[1].pci_path[:2] == ("0000:0c:00.0", "0000:15:00.0")


def test_azure_topo_file_has_only_pci(samples: Path) -> None:
    topo = parse((samples / AZURE).read_text())
    assert len(topo.gpus) == len(topo.nics) == 8
    assert {(g.dev, g.rank, g.sm, g.gdr, g.pci_class) for g in topo.gpus} == {(None, None, None, None, "0x030200")}
    assert {(n.name, n.speed_mbps, n.pci_class) for n in topo.nics} == {(None, None, "0x020700")}
    # GPU busids skip 0004..0007 (VM PCI domains): the 4th GPU is 0008:00:00.0.
    assert [g.busid for g in topo.gpus][:4] == ["0001:00:00.0", "0002:00:00.0", "0003:00:00.0", "0008:00:00.0"]
    pairs = {g.busid: [n.busid for n in topo.nics if n.pci_switch == g.pci_switch] for g in topo.gpus}
    assert pairs["0008:00:00.0"] == ["0104:00:00.0"] and all(len(v) == 1 for v in pairs.values())
    assert [g.numa for g in topo.gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert {g.pci_switch for g in topo.gpus} == {f"ffff:ff:0{i}.0" for i in range(1, 9)}


@pytest.mark.parametrize("sample", [A100, AZURE])
def test_samples_round_trip(samples: Path, sample: str) -> None:
    topo = parse((samples / sample).read_text())
    out = dump(topo)
    assert parse(out) == topo
    assert dump(parse(out)) == out


# --- constructed variants -------------------------------------------------------------------------

# RECONSTRUCTED from NCCL 2.2x xml.cc output: host_hash, "32.0 GT/s PCIe" link speeds, coll on a dual-port NIC
# (two <net> in one <nic>), a C2C element on the GPU, and a virtual NIC written directly under the CPU.
NEWER = """<system version="1">
  <cpu host_hash="0x7a1b2c3d4e5f6071" numaid="0" affinity="ffffffff,ffffffff" arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="17">
    <pci busid="0000:15:00.0" class="0x060400" vendor="0x1000" device="0xc030" subsystem_vendor="0x1000" subsystem_device="0x100b" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:18:00.0" class="0x030200" vendor="0x10de" device="0x2330" subsystem_vendor="0x10de" subsystem_device="0x16c1" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1">
          <nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/>
          <c2c bw="0" count="0"/>
        </gpu>
      </pci>
      <pci busid="0000:19:00.0" class="0x020700" vendor="0x15b3" device="0x1021" subsystem_vendor="0x15b3" subsystem_device="0x0041" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic>
          <net name="mlx5_0" dev="0" speed="400000" port="1" latency="0.000000" guid="0x8e4d0a0003a1b2c3" maxconn="131072" gdr="1" coll="1"/>
          <net name="mlx5_1" dev="1" speed="400000" port="2" latency="0.000000" guid="0x8e4d0a0003a1b2c3" maxconn="131072" gdr="1" coll="0"/>
        </nic>
      </pci>
    </pci>
    <nic>
      <net name="eth0" dev="2" speed="25000" port="0" latency="0.000000" guid="0x2" maxconn="65536" gdr="0"/>
    </nic>
  </cpu>
</system>
"""  # noqa: E501


def test_newer_nccl_shapes() -> None:
    topo = parse(NEWER)
    assert topo.cpus == (TopoCpu(0, "ffffffff,ffffffff", "x86_64", "AuthenticAMD", "0x7a1b2c3d4e5f6071"),)
    assert topo.gpus == (
        TopoGpu(
            "0000:18:00.0", 0, 0, 90, True, "0x030200", 0, "0000:15:00.0", ("0000:15:00.0",),
            (NvLink("fffffff:ff:ff.0", 18, "0x068000"),),
        ),
    )  # fmt: skip
    assert [(n.name, n.busid, n.port, n.coll, n.speed_mbps, n.pci_switch) for n in topo.nics] == [
        ("mlx5_0", "0000:19:00.0", 1, True, 400000, "0000:15:00.0"),
        ("mlx5_1", "0000:19:00.0", 2, False, 400000, "0000:15:00.0"),
        ("eth0", None, 0, None, 25000, None),
    ]
    assert parse(dump(topo)) == topo


def test_class_without_bridge_and_endpoint_without_class() -> None:
    raw = """<system version="1"><cpu numaid="3">
      <pci busid="0000:40:00.0"><pci busid="0000:41:00.0"><gpu dev="5"/></pci></pci>
      <pci busid="0000:50:00.0" class="0x030000"/>
    </cpu></system>"""
    topo = parse(raw)
    assert [(g.busid, g.dev, g.pci_class, g.pci_path, g.numa) for g in topo.gpus] == [
        ("0000:41:00.0", 5, None, ("0000:40:00.0",), 3),
        ("0000:50:00.0", None, "0x030000", (), 3),
    ]
    assert parse(dump(topo)) == topo


# --- errors ---------------------------------------------------------------------------------------


def test_errors_name_the_element(samples: Path) -> None:
    raw = (samples / A100).read_text()
    err = parse_error(raw.replace('busid="0000:19:00.0"', 'busid="19:00"'))
    assert err.line == line_of(raw, 'busid="0000:19:00.0"') and "busid" in err.expected
    err = parse_error(raw.replace('<gpu dev="3"', '<gpu dev="three"'))
    assert err.line == line_of(raw, '<gpu dev="3"') and "integer" in err.expected
    err = parse_error(raw.replace('class="0x030200"', 'class="GPU"', 1))
    assert err.line == line_of(raw, 'class="0x030200"') and "6 hex digits" in err.expected
    err = parse_error(raw.replace("<system", "<topology").replace("</system>", "</topology>"))
    assert err.line == 1 and "<system>" in err.expected
    truncated = raw[: raw.index('<gpu dev="5"')]
    assert parse_error(truncated).line == truncated.count("\n") + 1


def test_nested_cpu_and_entities() -> None:
    err = parse_error('<system>\n<cpu numaid="0">\n<cpu numaid="1"/>\n</cpu>\n</system>\n')
    assert err.line == 3 and "<cpu>" in err.expected
    err = parse_error('<!DOCTYPE system [<!ENTITY x "y">]>\n<system>&x;</system>\n')
    assert err.line == 1 and "internal subset" in err.expected


@pytest.mark.parametrize("raw", ["", "\n\n"])
def test_empty(raw: str) -> None:
    err = parse_error(raw)
    assert err.line == 1 and "empty" in err.expected


# --- round trip -----------------------------------------------------------------------------------


@st.composite
def topologies(draw: st.DrawFn) -> NcclTopo:
    """A random host: CPUs with unique NUMA ids, a switch forest under each, GPUs and NICs placed in it."""
    busids = iter(f"0000:{b:02x}:00.0" for b in draw(st.permutations(range(40))))
    cpus: list[TopoCpu] = []
    gpus: list[TopoGpu] = []
    nics: list[TopoNic] = []
    for numa in range(draw(st.integers(1, 3))):
        cpus.append(TopoCpu(numa, draw(st.none() | st.just("ffff,0000")), "x86_64", None, None))
        paths: list[tuple[str, ...]] = [()]
        for _ in range(draw(st.integers(0, 4))):
            paths.append((*draw(st.sampled_from(paths)), next(busids)))
        for _ in range(draw(st.integers(0, 4))):
            path = draw(st.sampled_from(paths))
            links = tuple(NvLink(f"0000:c{i}:00.0", 2, "0x068000") for i in range(draw(st.integers(0, 2))))
            dev = draw(st.none() | st.integers(0, 16))
            sm, gdr = draw(st.none() | st.sampled_from([80, 90])), draw(st.none() | st.booleans())
            switch = path[-1] if path else None
            gpus.append(TopoGpu(next(busids), dev, dev, sm, gdr, "0x030200", numa, switch, path, links))
        for _ in range(draw(st.integers(0, 3))):
            path = draw(st.sampled_from(paths))
            busid = draw(st.none() | st.just(next(busids)))
            pci_class = None if busid is None else draw(st.sampled_from(["0x020700", "0x020000"]))
            for port in range(1, draw(st.integers(1, 2)) + 1):
                nics.append(
                    TopoNic(draw(st.none() | st.just(f"mlx5_{len(nics)}")), draw(st.none() | st.integers(0, 8)), busid,
                            draw(st.none() | st.sampled_from([200000, 400000])), port, draw(st.none() | st.just("0x1")),
                            draw(st.none() | st.booleans()), draw(st.none() | st.booleans()),
                            pci_class, numa,
                            path[-1] if path else None, path)
                )  # fmt: skip
    return NcclTopo(1, tuple(cpus), tuple(gpus), tuple(nics))


@settings(max_examples=200, deadline=None)
@given(topologies())
def test_round_trip(topo: NcclTopo) -> None:
    again = parse(dump(topo))
    # render orders the children of each node by busid, so the lists come back in tree order.
    assert Counter(again.gpus) == Counter(topo.gpus) and Counter(again.nics) == Counter(topo.nics)
    assert again.cpus == topo.cpus
    assert parse(dump(again)) == again
