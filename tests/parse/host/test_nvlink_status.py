"""Tests for the ``nvidia-smi nvlink --status`` parser: real sample, variants, errors, round trip, fuzz."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from unifab.errors import ParseError
from unifab.parse.host.nvlink_status import NvlinkGpu, NvlinkLink, NvlinkStatus, dump, parse

GOLDEN = Path(__file__).parent / "golden"
A100 = "host/nvidia_smi_nvlink_status_a100.txt"
GoldenCheck = Callable[[Path, Any], None]


def parse_error(raw: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, "t.txt")
    return info.value


def test_golden(samples: Path, golden: GoldenCheck) -> None:
    golden(GOLDEN / "nvidia_smi_nvlink_status_a100.json", parse((samples / A100).read_text(), A100))


def test_sample(samples: Path) -> None:
    raw = (samples / A100).read_text()
    r = parse(raw)
    assert [g.index for g in r.gpus] == list(range(8))
    assert {g.name for g in r.gpus} == {"NVIDIA A100-SXM4-80GB"}
    assert r.gpus[0].uuid == "GPU-5269b708-678a-b1a8-60f0-c90406537486"
    assert all(g.links == tuple(NvlinkLink(k, 25.0, True) for k in range(12)) for g in r.gpus)
    assert dump(r) == raw + "\n"  # the capture lacks the final newline


def test_inactive_and_fractional_speed() -> None:
    raw = (
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n"
        "\t Link 0: 26.562 GB/s\n"
        "\t Link 1: <inactive>\n"
        "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)\n"
    )
    r = parse(raw)
    assert r.gpus == (
        NvlinkGpu(0, "NVIDIA H100 80GB HBM3", "GPU-1", (NvlinkLink(0, 26.562, True), NvlinkLink(1, None, False))),
        NvlinkGpu(1, "NVIDIA H100 80GB HBM3", "GPU-2", ()),
    )
    assert parse(dump(r)) == r


@pytest.mark.parametrize("raw", ["", "\n \n"])
def test_empty(raw: str) -> None:
    assert parse_error(raw).line == 1


def test_link_before_gpu() -> None:
    err = parse_error("\n  Link 0: 25 GB/s\n")
    assert err.line == 2 and "before the links" in err.expected


def test_unknown_line_and_duplicates() -> None:
    gpu = "GPU 0: X (UUID: GPU-1)\n"
    err = parse_error(gpu + "NVLink is not supported\n")
    assert err.line == 2 and "'NVLink is not supported'" in err.expected
    assert parse_error(gpu + " Link 0: 25 GB/s\n Link 0: 25 GB/s\n").line == 3
    assert parse_error(gpu + gpu).line == 2
    assert parse_error(gpu + " Link 0: 25 Gb/s\n").line == 2


LINKS = st.lists(
    st.builds(NvlinkLink, st.integers(0, 99), st.none() | st.integers(0, 99999).map(lambda k: k / 1000), st.just(True)),
    max_size=4,
    unique_by=lambda k: k.link,
).map(lambda links: tuple(NvlinkLink(k.link, k.speed_gbytes_per_s, k.speed_gbytes_per_s is not None) for k in links))
NAME = st.from_regex(r"\ANVIDIA [A-Za-z0-9-]{1,10}( [A-Za-z0-9]{1,5})?\Z")


@given(st.lists(st.tuples(NAME, LINKS), max_size=4))
def test_round_trip(gpus: list[tuple[str, tuple[NvlinkLink, ...]]]) -> None:
    r = NvlinkStatus(tuple(NvlinkGpu(i, name, f"GPU-{i}", links) for i, (name, links) in enumerate(gpus)))
    if r.gpus:
        assert parse(dump(r)) == r
