"""Tests for the ``nvidia-smi topo -m`` parser (no real capture in the corpus: every input is RECONSTRUCTED)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host.nvidia_smi_topo import NvidiaSmiTopo, dump, parse


def text(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "topo.txt")
    return info.value


# RECONSTRUCTED from the grammar in the reference (section 3.3) and public captures of 8xH100 HGX hosts: TABs
# expanded to spaces as most captures have them; NV18 between all GPUs; one PIX NIC per GPU, but the rails of
# GPU4/GPU5 are crossed (GPU4 -> NIC5, GPU5 -> NIC4); NUMA 0/1 halves.
H100_8NIC = text(
    "        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    NIC0    NIC1    NIC2    "
    "NIC3    NIC4    NIC5    NIC6    NIC7    CPU Affinity    NUMA Affinity   GPU NUMA ID",
    "GPU0     X      NV18    NV18    NV18    NV18    NV18    NV18    NV18    PIX     NODE    NODE    "
    "NODE    SYS     SYS     SYS     SYS     0-55,112-167    0               N/A",
    "GPU1    NV18     X      NV18    NV18    NV18    NV18    NV18    NV18    NODE    PIX     NODE    "
    "NODE    SYS     SYS     SYS     SYS     0-55,112-167    0               N/A",
    "GPU2    NV18    NV18     X      NV18    NV18    NV18    NV18    NV18    NODE    NODE    PIX     "
    "NODE    SYS     SYS     SYS     SYS     0-55,112-167    0               N/A",
    "GPU3    NV18    NV18    NV18     X      NV18    NV18    NV18    NV18    NODE    NODE    NODE    "
    "PIX     SYS     SYS     SYS     SYS     0-55,112-167    0               N/A",
    "GPU4    NV18    NV18    NV18    NV18     X      NV18    NV18    NV18    SYS     SYS     SYS     "
    "SYS     NODE    PIX     NODE    NODE    56-111,168-223  1               N/A",
    "GPU5    NV18    NV18    NV18    NV18    NV18     X      NV18    NV18    SYS     SYS     SYS     "
    "SYS     PIX     NODE    NODE    NODE    56-111,168-223  1               N/A",
    "GPU6    NV18    NV18    NV18    NV18    NV18    NV18     X      NV18    SYS     SYS     SYS     "
    "SYS     NODE    NODE    PIX     NODE    56-111,168-223  1               N/A",
    "GPU7    NV18    NV18    NV18    NV18    NV18    NV18    NV18     X      SYS     SYS     SYS     "
    "SYS     NODE    NODE    NODE    PIX     56-111,168-223  1               N/A",
    "NIC0    PIX     NODE    NODE    NODE    SYS     SYS     SYS     SYS      X      NODE    NODE    "
    "NODE    SYS     SYS     SYS     SYS",
    "NIC1    NODE    PIX     NODE    NODE    SYS     SYS     SYS     SYS     NODE     X      NODE    "
    "NODE    SYS     SYS     SYS     SYS",
    "NIC2    NODE    NODE    PIX     NODE    SYS     SYS     SYS     SYS     NODE    NODE     X      "
    "NODE    SYS     SYS     SYS     SYS",
    "NIC3    NODE    NODE    NODE    PIX     SYS     SYS     SYS     SYS     NODE    NODE    NODE    "
    " X      SYS     SYS     SYS     SYS",
    "NIC4    SYS     SYS     SYS     SYS     NODE    PIX     NODE    NODE    SYS     SYS     SYS     "
    "SYS      X      NODE    NODE    NODE",
    "NIC5    SYS     SYS     SYS     SYS     PIX     NODE    NODE    NODE    SYS     SYS     SYS     "
    "SYS     NODE     X      NODE    NODE",
    "NIC6    SYS     SYS     SYS     SYS     NODE    NODE    PIX     NODE    SYS     SYS     SYS     "
    "SYS     NODE    NODE     X      NODE",
    "NIC7    SYS     SYS     SYS     SYS     NODE    NODE    NODE    PIX     SYS     SYS     SYS     "
    "SYS     NODE    NODE    NODE     X ",
    "",
    "Legend:",
    "",
    "  X    = Self",
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
    "  PIX  = Connection traversing at most a single PCIe bridge",
    "  NV#  = Connection traversing a bonded set of # NVLinks",
    "",
    "NIC Legend:",
    "",
    "  NIC0: mlx5_0",
    "  NIC1: mlx5_1",
    "  NIC2: mlx5_2",
    "  NIC3: mlx5_3",
    "  NIC4: mlx5_4",
    "  NIC5: mlx5_5",
    "  NIC6: mlx5_6",
    "  NIC7: mlx5_7",
)


def test_h100_8nic() -> None:
    topo = parse(H100_8NIC)
    assert topo.gpus == tuple(f"GPU{i}" for i in range(8))
    assert topo.nics == tuple(f"NIC{i}" for i in range(8))
    assert topo.nic_legend == {f"NIC{i}": f"mlx5_{i}" for i in range(8)}
    assert topo.matrix["GPU0"]["GPU0"] == "X" and topo.matrix["GPU0"]["GPU7"] == "NV18"
    pix = {gpu: [nic for nic in topo.nics if topo.matrix[gpu][nic] == "PIX"] for gpu in topo.gpus}
    assert pix == {f"GPU{i}": [f"NIC{ {4: 5, 5: 4}.get(i, i) }"] for i in range(8)}
    assert topo.matrix["NIC5"]["GPU4"] == "PIX" and topo.matrix["GPU0"]["NIC4"] == "SYS"
    assert topo.cpu_affinity["GPU0"] == "0-55,112-167" and topo.cpu_affinity["GPU7"] == "56-111,168-223"
    assert topo.numa_affinity == {f"GPU{i}": "0" if i < 4 else "1" for i in range(8)}
    assert topo.gpu_numa_id == dict.fromkeys(topo.gpus)


def test_tabs_spaces_and_ansi_read_the_same() -> None:
    topo = parse(H100_8NIC)
    tabbed = dump(topo)
    assert tabbed.expandtabs(8) == H100_8NIC  # nvidia-smi prints TABs; the capture expanded them
    assert tabbed.split("\n")[1].startswith("GPU0\t X \tNV18\t") and "\t0\t\tN/A" in tabbed
    lines = tabbed.split("\n")
    # RECONSTRUCTED terminal output: header underlined, row labels bold (ANSI SGR codes).
    coloured = ["\x1b[4m\x1b[1m" + lines[0] + "\x1b[0m"] + [
        f"\x1b[1m{line[:4]}\x1b[0m{line[4:]}" if line[:3] in ("GPU", "NIC") else line for line in lines[1:]
    ]
    assert parse(tabbed) == parse("\r\n".join(coloured)) == topo


# RECONSTRUCTED: an older driver (r3xx/r4xx era) on a 4-GPU PCIe host: SOC instead of SYS, the NIC labelled by its
# RDMA device, no NIC legend, only the CPU Affinity column.
OLD_4GPU = text(
    "\tGPU0\tGPU1\tGPU2\tGPU3\tmlx5_0\tCPU Affinity",
    "GPU0\t X \tPIX\tSOC\tSOC\tPHB\t0-11,24-35",
    "GPU1\tPIX\t X \tSOC\tSOC\tPHB\t0-11,24-35",
    "GPU2\tSOC\tSOC\t X \tPIX\tSOC\t12-23,36-47",
    "GPU3\tSOC\tSOC\tPIX\t X \tSOC\t12-23,36-47",
    "mlx5_0\tPHB\tPHB\tSOC\tSOC\t X ",
    "",
    "Legend:",
    "",
    "  X    = Self",
    "  SOC  = Connection traversing PCIe as well as the SMP link between CPU sockets(e.g. QPI)",
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
    "  PXB  = Connection traversing multiple PCIe switches (without traversing the PCIe Host Bridge)",
    "  PIX  = Connection traversing a single PCIe switch",
    "  NV#  = Connection traversing a bonded set of # NVLinks",
)


def test_old_driver_with_soc() -> None:
    topo = parse(OLD_4GPU)
    assert (topo.gpus, topo.nics, topo.nic_legend) == (("GPU0", "GPU1", "GPU2", "GPU3"), ("mlx5_0",), {})
    assert topo.matrix["GPU0"]["GPU2"] == "SOC" and topo.matrix["mlx5_0"]["GPU1"] == "PHB"
    assert topo.cpu_affinity == {
        "GPU0": "0-11,24-35",
        "GPU1": "0-11,24-35",
        "GPU2": "12-23,36-47",
        "GPU3": "12-23,36-47",
    }
    assert (topo.numa_affinity, topo.gpu_numa_id) == ({}, {})
    assert dump(topo) == OLD_4GPU


def test_matrix_without_legend_and_na_affinity() -> None:
    topo = parse(text("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity", "GPU0\t X \tNV4\tN/A\tN/A", "GPU1\tNV4\t X "))
    assert topo.cpu_affinity == {"GPU0": None, "GPU1": None}
    assert topo.numa_affinity == {"GPU0": None, "GPU1": None}
    assert parse(dump(topo)) == topo


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "\n \n"])
def test_empty(raw: str) -> None:
    err = parse_error(raw)
    assert err.line == 1 and "empty" in err.expected


@pytest.mark.parametrize(
    ("old", "new", "line", "expected"),
    [
        (
            "        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    NIC0",
            "        NIC0",
            1,
            "GPU0 .. GPUn",
        ),
        ("GPU3    NV18    NV18    NV18     X ", "GPU3    NV18    NV18    NV18    NV18", 5, "X only on the diagonal"),
        ("GPU2    NV18    NV18     X      NV18", "GPU2    NV18    NV18     X      nv18", 4, "relation"),
        ("NIC7    SYS ", "NIC9    SYS ", 17, "a row for one of"),
        ("NIC3    NODE    NODE    NODE    PIX     SYS", "NIC3    NODE    NODE    NODE    PIX", 13, "16 relation cells"),
        ("56-111,168-223  1               N/A\nGPU6", "56-111,168-223  one             N/A\nGPU6", 7, "NUMA Affinity"),
        ("  NIC3: mlx5_3", "  NIC3 = mlx5_3", 34, "NICk: <rdma device>"),
        ("  NIC3: mlx5_3", "  NIC2: mlx5_3", 34, "one 'NICk"),
        ("  PIX  = Connection", "  PIX    Connection", 26, "CODE = text"),
    ],
)
def test_bad_lines(old: str, new: str, line: int, expected: str) -> None:
    assert old in H100_8NIC
    err = parse_error(H100_8NIC.replace(old, new, 1))
    assert err.line == line and expected in err.expected


def test_row_twice_and_legend_twice() -> None:
    lines = H100_8NIC.split("\n")
    err = parse_error("\n".join([*lines[:3], lines[2], *lines[3:]]))
    assert err.line == 4 and "each once" in err.expected
    err = parse_error(H100_8NIC + "Legend:\n")
    assert err.line == H100_8NIC.count("\n") + 1 and "once" in err.expected


def test_header_only() -> None:
    err = parse_error("\tGPU0\tCPU Affinity\n")
    assert err.line == 1 and "matrix rows" in err.expected


# --- round trip -----------------------------------------------------------------------------------


RELATIONS = st.sampled_from(["PIX", "PXB", "PHB", "NODE", "SYS", "SOC", "NV4", "NV12", "NV18"])
AFFINITY = st.none() | st.sampled_from(["0-55,112-167", "0", "12-23,36-47", "0-1"])


@st.composite
def topologies(draw: st.DrawFn) -> NvidiaSmiTopo:
    gpus = tuple(f"GPU{i}" for i in range(draw(st.integers(1, 8))))
    old_names = draw(st.booleans())
    nics = tuple(f"mlx5_{i}" if old_names else f"NIC{i}" for i in range(draw(st.integers(0, 4))))
    labels = gpus + nics
    matrix = {a: {b: "X" if a == b else draw(RELATIONS) for b in labels} for a in labels}
    columns = draw(st.integers(0, 3))
    return NvidiaSmiTopo(
        gpus=gpus,
        nics=nics,
        matrix=matrix,
        nic_legend={} if old_names else {nic: f"mlx5_{i}" for i, nic in enumerate(nics)},
        cpu_affinity={g: draw(AFFINITY) for g in gpus} if columns >= 1 else {},
        numa_affinity={g: draw(st.none() | st.sampled_from(["0", "1", "0-1"])) for g in gpus} if columns >= 2 else {},
        gpu_numa_id={g: draw(st.none() | st.sampled_from(["2", "10"])) for g in gpus} if columns >= 3 else {},
    )


@settings(max_examples=200, deadline=None)
@given(topologies())
def test_round_trip(topo: NvidiaSmiTopo) -> None:
    out = dump(topo)
    assert parse(out) == topo
    assert parse(out.expandtabs(8)) == topo
