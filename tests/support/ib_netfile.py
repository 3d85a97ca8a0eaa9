"""An ibsim NETFILE (ibnetdiscover-like topology) for a rail-optimised InfiniBand pod, and what it should look like
to the real diags.

``rail_fabric(hosts=4, rails=2, spines=2)``: host ``gpu00h`` has one single-port HCA per rail (``mlx5_<r>``,
NodeDescription ``"gpu00h mlx5_<r>"``) cabled to leaf ``ib-leaf-r<r>`` port ``h`` (1-based); leaf port
``uplink_base + s`` goes to spine ``ib-spine-<s>`` port ``r + 1``. Switch descriptions follow NVIDIA's
``MF0;<name>:MQM8700/U1``. Links train 4X HDR by default (``width=2 speed=7 extspeed=7`` at the top).

This ibsim (0.10) knows extended speeds FDR, EDR and HDR only (``extspeed`` 0..7: "bad extended speed ... should
be between 0 to 7"), so **HDR is the fastest link it can simulate; NDR cannot be**. A link's own width/speed is
set with the per-port options ``w=<width bits> s=<speed bits> e=<ext speed bits>`` on *both* ends (ibsim panics
on "mismatched enabled width"); the ``# ... lid 0 1xSDR`` comment annotation sets only the width (the speed
stays the global extended one), so it is not used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["NetFabric", "NetLink", "NetNode", "rail_fabric"]

# PortInfo LinkWidthEnabled / LinkSpeedEnabled / LinkSpeedExtEnabled bits
_WIDTH_BITS = {"1X": 1, "4X": 2, "8X": 4, "12X": 8, "2X": 16}
_SPEED_BITS = {"SDR": 1, "DDR": 2, "QDR": 4}
_EXT_BITS = {"FDR": 1, "EDR": 2, "HDR": 4}
VENDID, SWITCH_DEVID, CA_DEVID = 0x2C9, 0xCF08, 0x101B


@dataclass(frozen=True, slots=True)
class NetNode:
    id: str  # the NETFILE id ibsim's console commands name ("S-leaf-r0", "H-gpu001-mlx5_0")
    kind: str  # "switch" | "ca"
    guid: int  # node GUID; a CA's port 1 GUID is guid + 1 (ibsim), a switch's ports share guid
    nports: int
    description: str


@dataclass(frozen=True, slots=True)
class NetLink:
    a_id: str
    a_port: int
    b_id: str
    b_port: int
    width: str  # "4X"
    speed: str  # "HDR"


@dataclass(frozen=True, slots=True)
class NetFabric:
    nodes: tuple[NetNode, ...]
    links: tuple[NetLink, ...]
    text: str  # the NETFILE

    def node(self, node_id: str) -> NetNode:
        return next(n for n in self.nodes if n.id == node_id)

    def by_guid(self) -> dict[int, NetNode]:
        return {n.guid: n for n in self.nodes}

    def first_ca(self) -> NetNode:
        return next(n for n in self.nodes if n.kind == "ca")


def _opts(width: str, speed: str) -> str:
    if speed in _SPEED_BITS:
        return f" w={_WIDTH_BITS[width]} s={_SPEED_BITS[speed]} e=0"
    return f" w={_WIDTH_BITS[width]} s=7 e={_EXT_BITS[speed]}"


def rail_fabric(
    hosts: int,
    rails: int,
    spines: int,
    *,
    ports: int = 40,
    uplink_base: int = 32,
    link_rates: Mapping[tuple[str, int], tuple[str, str]] | None = None,
) -> NetFabric:
    """The fabric; ``link_rates`` sets the width/speed of the links at (node id, port), e.g.
    ``{("S-leaf-r1", 2): ("1X", "SDR")}`` (either end may be named)."""
    if hosts > uplink_base or uplink_base + spines > ports or rails + 1 > ports:
        raise ValueError("fabric does not fit the switch port count")
    nodes: list[NetNode] = []
    links: list[NetLink] = []
    leaf = [f"S-leaf-r{r}" for r in range(rails)]
    spine = [f"S-spine-{s + 1}" for s in range(spines)]
    for r, lid in enumerate(leaf):
        nodes.append(NetNode(lid, "switch", 0xB83FD20300A10000 + r, ports, f"MF0;ib-leaf-r{r}:MQM8700/U1"))
    for s, sid in enumerate(spine):
        nodes.append(NetNode(sid, "switch", 0xB83FD20300A20000 + s, ports, f"MF0;ib-spine-{s + 1}:MQM8700/U1"))
    for h in range(hosts):
        for r in range(rails):
            host = f"gpu{h + 1:03d}"
            guid = 0xA088C20300B10000 + (h << 8) + (r << 1)
            nodes.append(NetNode(f"H-{host}-mlx5_{r}", "ca", guid, 1, f"{host} mlx5_{r}"))
    rates = dict(link_rates or {})

    def rate(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, str]:
        return rates.get(a) or rates.get(b) or ("4X", "HDR")

    for h in range(hosts):
        for r in range(rails):
            ca = f"H-gpu{h + 1:03d}-mlx5_{r}"
            links.append(NetLink(leaf[r], h + 1, ca, 1, *rate((leaf[r], h + 1), (ca, 1))))
    for r in range(rails):
        for s in range(spines):
            a, b = (leaf[r], uplink_base + 1 + s), (spine[s], r + 1)
            links.append(NetLink(a[0], a[1], b[0], b[1], *rate(a, b)))

    ends: dict[str, list[tuple[int, str, int, str]]] = {n.id: [] for n in nodes}
    for lk in links:
        opts = "" if (lk.width, lk.speed) == ("4X", "HDR") else _opts(lk.width, lk.speed)
        ends[lk.a_id].append((lk.a_port, lk.b_id, lk.b_port, opts))
        ends[lk.b_id].append((lk.b_port, lk.a_id, lk.a_port, opts))
    out = ["width=2", "speed=7", "extspeed=7", ""]
    for n in nodes:
        devid = SWITCH_DEVID if n.kind == "switch" else CA_DEVID
        out += [f"vendid=0x{VENDID:x}", f"devid=0x{devid:x}", f"sysimgguid=0x{n.guid:x}"]
        if n.kind == "switch":
            out += [f"switchguid=0x{n.guid:x}", f'Switch {n.nports} "{n.id}" # "{n.description}"']
        else:
            out += [f"caguid=0x{n.guid:x}", f'Ca {n.nports} "{n.id}" # "{n.description}"']
        out += [f'[{p}] "{rid}"[{rp}]{opts}' for p, rid, rp, opts in sorted(ends[n.id])]
        out.append("")
    return NetFabric(tuple(nodes), tuple(links), "\n".join(out))
