"""``nvidia-smi nvlink --status`` (``-s``; drivers r4xx .. r57x): per GPU, each NVLink's speed or ``<inactive>``.

::

    GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5269b708-678a-b1a8-60f0-c90406537486)
             Link 0: 25 GB/s
             Link 1: <inactive>

Speeds are per direction in gigabytes per second as printed (``25 GB/s``, ``26.562 GB/s`` on H100), kept
in ``speed_gbytes_per_s`` (multiply by 8 for Gbit/s). A GPU without NVLink has a header and no links.
Lines nvidia-smi prints instead of a table (``NVLink is not supported ...``, ``No devices were found``)
are rejected with a :class:`~unifab.errors.ParseError`, as is any other line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = ["NvlinkGpu", "NvlinkLink", "NvlinkStatus", "dump", "parse"]

_GPU = re.compile(r"^GPU ([0-9]{1,4}): (.+?) \(UUID: ([^)\s]+)\)$")
_LINK = re.compile(r"^Link ([0-9]{1,3}): (?:([0-9]{1,6}(?:\.[0-9]{1,6})?) GB/s|(<inactive>))$")


@dataclass(frozen=True, slots=True)
class NvlinkLink:
    link: int
    speed_gbytes_per_s: float | None  # None when inactive
    active: bool


@dataclass(frozen=True, slots=True)
class NvlinkGpu:
    index: int
    name: str  # "NVIDIA A100-SXM4-80GB"
    uuid: str  # "GPU-5269b708-..."
    links: tuple[NvlinkLink, ...]


@dataclass(frozen=True, slots=True)
class NvlinkStatus:
    gpus: tuple[NvlinkGpu, ...]


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> NvlinkStatus:
    """Read ``nvidia-smi nvlink --status``; raise :class:`ParseError` on anything else.

    With a :class:`~unifab.errors.ParseProblems` collector a bad link line costs that link, a bad or repeated
    GPU line that GPU (its link lines with it); a text with no GPU read raises.
    """
    if not text.strip():
        raise ParseError(source, "expected `nvidia-smi nvlink --status` output, got empty text", line=1)
    log = problems if problems is not None else ParseProblems.strict(source)
    gpus: list[tuple[int, str, str, list[NvlinkLink]]] = []
    in_bad_gpu = False  # inside a GPU whose line could not be read: its links go with it
    for number, raw in enumerate(text.split("\n"), start=1):
        line = " ".join(raw.split())
        if not line:
            continue
        is_link = line.startswith("Link ")
        if in_bad_gpu and is_link:
            continue
        with log.skipping(f"link line {number}" if is_link else f"the GPU of line {number} and its links") as row:
            _line(line, number, source, gpus)
        if not is_link:
            in_bad_gpu = row.failed
    if not gpus and log.problems:
        raise log.problems[0].error()
    return NvlinkStatus(tuple(NvlinkGpu(i, name, uuid, tuple(links)) for i, name, uuid, links in gpus))


def _line(line: str, number: int, source: str, gpus: list[tuple[int, str, str, list[NvlinkLink]]]) -> None:
    """One GPU or link line, stored into ``gpus`` last."""
    if m := _GPU.match(line):
        index = int(m[1])
        if any(g[0] == index for g in gpus):
            raise ParseError(source, f"expected GPU {index} once, got it again", line=number)
        gpus.append((index, m[2], m[3], []))
    elif m := _LINK.match(line):
        if not gpus:
            raise ParseError(source, "expected a 'GPU N: <name> (UUID: ...)' line before the links", line=number)
        links = gpus[-1][3]
        link = int(m[1])
        if any(k.link == link for k in links):
            raise ParseError(source, f"expected link {link} once per GPU, got it again", line=number)
        speed = None if m[2] is None else float(m[2])
        links.append(NvlinkLink(link=link, speed_gbytes_per_s=speed, active=speed is not None))
    else:
        raise ParseError(
            source,
            f"expected 'GPU N: <name> (UUID: ...)' or 'Link N: <speed> GB/s', got {line[:60]!r}",
            line=number,
        )


def _speed(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(value)


def dump(status: NvlinkStatus) -> str:
    """Write ``status`` as nvidia-smi prints it (9-space link indent)."""
    out: list[str] = []
    for gpu in status.gpus:
        out.append(f"GPU {gpu.index}: {gpu.name} (UUID: {gpu.uuid})")
        for k in gpu.links:
            speed = "<inactive>" if k.speed_gbytes_per_s is None else f"{_speed(k.speed_gbytes_per_s)} GB/s"
            out.append(f"         Link {k.link}: {speed}")
    return "".join(line + "\n" for line in out)
