"""The rail map: scalable units by rails, one cell per leaf, spines above, colored by the worst finding.

:func:`rail_grid` aggregates a fabric and its findings per leaf (host links by severity, uplinks,
the leaf's own ports) and per spine, in one pass over links and one over findings, so a 100,000-GPU
fabric is ~3,000 cells, not 100,000 lines. :func:`render_svg` draws the grid as plain SVG (no
plotting dependency); :func:`grid_json` is the same grid for scripts.

A leaf is a switch cabled (planned or seen) to a host NIC; its rail is the ``-r<i>`` suffix of its name
(``leaf-su1-r3``, ``ib-leaf-r3``), else the rail most of its NICs number (``mlx5_<i>``/``eth<i>``); its
scalable unit is the ``su<k>`` in its name, else one unit for the fabric. A spine is a switch cabled
to a leaf that is not itself a leaf. A finding touches a leaf through its entities: a link with an end on
the leaf, a port of it, the switch itself, or a NIC cabled to it. Findings only about hosts or GPUs
(no network entity) are counted in the title, not drawn.

Each cell counts the uplinks that are up, as TOPO-UPLINKS does: an uplink (a leaf port cabled, planned or
seen, to a spine) is up when LLDP sees a cable on it; a planned one LLDP does not see is down ("6/8 uplinks
up"). A switch that reports no LLDP at all says nothing about which are up: its cell gives the uplinks it has
and "no LLDP" instead.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from xml.sax import saxutils

from unifab.model import Fabric, Finding, Severity
from unifab.report.text import display

__all__ = [
    "COLORS",
    "LEVELS",
    "OK",
    "TINTS",
    "LeafCell",
    "RailGrid",
    "SpineCell",
    "grid_json",
    "rail_grid",
    "render_svg",
    "uplinks_text",
    "worst",
]


def escape(text: str) -> str:
    """SVG text: control characters made visible (XML cannot even hold most of them), then XML-escaped."""
    return saxutils.escape(display(text))


def quoteattr(text: str) -> str:
    """An SVG attribute value: as :func:`escape`, quoted."""
    return saxutils.quoteattr(display(text))


OK = "ok"
LEVELS = ("critical", "error", "warning", "info", OK)
COLORS = {
    "critical": "#a50f15",
    "error": "#e6550d",
    "warning": "#f2b701",
    "info": "#6baed6",
    OK: "#41ab5d",
}
TINTS = {"critical": "#f5a3a3", "error": "#fdd5ad", "warning": "#fff3b0", "info": "#deebf7", OK: "#e5f5e0"}
_RANK = {"critical": 4, "error": 3, "warning": 2, "info": 1, OK: 0}
_RAIL = re.compile(r"-?r(\d+)$")
_SU = re.compile(r"su(\d+)")
_NUMBER = re.compile(r"(\d+)$")


def worst(*levels: str) -> str:
    return max(levels, key=_RANK.__getitem__, default=OK)


@dataclass(slots=True)
class LeafCell:
    name: str
    su: str
    rail: int | None
    hosts: set[str] = field(default_factory=set)
    # Keyed by the leaf's port: a planned and a discovered cable on one port are one host link.
    host_links: dict[str, str] = field(default_factory=dict)  # leaf port -> worst severity touching it
    uplinks: dict[str, str] = field(default_factory=dict)  # leaf port -> worst severity, planned or seen
    uplinks_seen: set[str] = field(default_factory=set)  # leaf ports LLDP sees an uplink cable on
    reports_lldp: bool = False  # LLDP saw any cable on the leaf (host link or uplink)
    own: str = OK  # findings on the switch or its ports

    @property
    def severity(self) -> str:
        return worst(self.own, *self.host_links.values(), *self.uplinks.values())

    @property
    def uplinks_up(self) -> int | None:
        """Uplinks LLDP sees; ``None`` when the leaf reports no LLDP (nothing is known to be up or down)."""
        return len(self.uplinks_seen) if self.reports_lldp else None

    def uplinks_down(self) -> list[str]:
        """Leaf ports of uplinks that are not up, in port order (empty when LLDP was not collected)."""
        if not self.reports_lldp:
            return []
        return sorted((p for p in self.uplinks if p not in self.uplinks_seen), key=_natural)

    def link_counts(self) -> dict[str, int]:
        counts = Counter(self.host_links.values())
        return {level: counts.get(level, 0) for level in LEVELS}


@dataclass(slots=True)
class SpineCell:
    name: str
    uplinks: dict[str, str] = field(default_factory=dict)  # spine port -> worst severity
    uplinks_seen: set[str] = field(default_factory=set)  # spine ports LLDP sees a leaf cable on
    reports_lldp: bool = False  # a leaf it is cabled to reports LLDP, so its unseen cables are down
    own: str = OK

    @property
    def severity(self) -> str:
        return worst(self.own, *self.uplinks.values())

    @property
    def uplinks_up(self) -> int | None:
        return len(self.uplinks_seen) if self.reports_lldp else None


@dataclass(slots=True)
class RailGrid:
    leaves: dict[str, LeafCell]
    spines: dict[str, SpineCell]
    units: list[str]  # scalable units in display order
    rails: list[int | None]
    by_severity: dict[str, int]  # every finding
    off_map: int  # findings with no leaf, spine or link among their entities

    def cell(self, su: str, rail: int | None) -> LeafCell | None:
        return self.by_position().get((su, rail))

    def by_position(self) -> dict[tuple[str, int | None], LeafCell]:
        return {(c.su, c.rail): c for c in self.leaves.values()}


def rail_grid(fabric: Fabric, findings: list[Finding]) -> RailGrid:
    """Aggregate the fabric per leaf and spine and fold every finding onto what it touches."""
    hosts = fabric.hosts
    leaves: dict[str, LeafCell] = {}
    link_ends: dict[str, tuple[tuple[str, str], ...]] = {}  # link id -> its (switch, port) ends on the map
    nic_link: dict[tuple[str, str], str] = {}  # (host, netdev or RDMA device) -> link id
    nic_rails: dict[str, Counter[int]] = {}
    for lk in fabric.links:
        if (lk.a.node in hosts) == (lk.b.node in hosts):
            continue
        host_end, sw_end = (lk.a, lk.b) if lk.a.node in hosts else (lk.b, lk.a)
        if sw_end.node not in fabric.switches and "plan" not in lk.sources:
            continue  # a planned leaf that was not collected keeps its cell (its COVERAGE finding colours it)
        cell = leaves.get(sw_end.node)
        if cell is None:
            cell = leaves[sw_end.node] = LeafCell(sw_end.node, _su(sw_end.node), _rail(sw_end.node))
        cell.hosts.add(host_end.node)
        cell.host_links[sw_end.port] = OK
        cell.reports_lldp |= "lldp" in lk.sources
        link_ends[lk.id] = ((sw_end.node, sw_end.port),)
        nic_link[(host_end.node, host_end.port)] = lk.id
        if (m := _NUMBER.search(host_end.port)) is not None:
            nic_rails.setdefault(sw_end.node, Counter())[int(m.group(1))] += 1
    for name, cell in leaves.items():
        if cell.rail is None and name in nic_rails:
            cell.rail = nic_rails[name].most_common(1)[0][0]
    for host in hosts.values():
        for netdev, nic in host.nics.items():
            if nic.rdma_dev and (host.name, netdev) in nic_link:
                nic_link.setdefault((host.name, nic.rdma_dev), nic_link[(host.name, netdev)])
    spines: dict[str, SpineCell] = {}
    spine_leaves: dict[str, set[str]] = {}
    for lk in fabric.links:
        an, bn = lk.a.node, lk.b.node
        if (an in leaves) == (bn in leaves) or an in hosts or bn in hosts:
            continue
        leaf, spine = (lk.a, lk.b) if an in leaves else (lk.b, lk.a)
        if spine.node not in fabric.switches:
            continue
        cell, spine_cell = leaves[leaf.node], spines.setdefault(spine.node, SpineCell(spine.node))
        cell.uplinks[leaf.port] = OK
        spine_cell.uplinks[spine.port] = OK
        if "lldp" in lk.sources:  # up, as TOPO-UPLINKS counts it: a planned cable LLDP does not see is down
            cell.uplinks_seen.add(leaf.port)
            cell.reports_lldp = True
            spine_cell.uplinks_seen.add(spine.port)
        spine_leaves.setdefault(spine.node, set()).add(leaf.node)
        link_ends[lk.id] = ((leaf.node, leaf.port), (spine.node, spine.port))
    for name, spine_cell in spines.items():
        spine_cell.reports_lldp = any(leaves[leaf_name].reports_lldp for leaf_name in spine_leaves[name])
    off_map = 0
    by_severity: Counter[str] = Counter()
    for f in findings:
        level = f.severity.value
        by_severity[level] += 1
        if not _fold(f, level, leaves, spines, link_ends, nic_link):
            off_map += 1
    units = sorted({c.su for c in leaves.values()}, key=_natural)
    rails = sorted({c.rail for c in leaves.values()}, key=lambda r: (r is None, r or 0))
    return RailGrid(
        leaves,
        dict(sorted(spines.items(), key=lambda kv: _natural(kv[0]))),
        units,
        rails,
        {s.value: by_severity.get(s.value, 0) for s in sorted(Severity, key=lambda s: -s.rank)},
        off_map,
    )


def _fold(
    f: Finding,
    level: str,
    leaves: dict[str, LeafCell],
    spines: dict[str, SpineCell],
    link_ends: dict[str, tuple[tuple[str, str], ...]],
    nic_link: dict[tuple[str, str], str],
) -> bool:
    touched = False
    for entity in f.entities:
        kind, _, rest = entity.partition(":")
        link = None
        if kind == "link":
            link = entity if entity in link_ends else None
        elif kind == "nic":
            host, _, dev = rest.partition(":")
            link = nic_link.get((host, dev))
        elif kind in ("switch", "port", "optic"):
            device = rest.partition(":")[0]
            target: LeafCell | SpineCell | None = leaves.get(device) or spines.get(device)
            if target is not None:
                target.own = worst(target.own, level)
                touched = True
        if link is None:
            continue
        for node, port in link_ends[link]:
            if (cell := leaves.get(node)) is not None:
                table = cell.host_links if port in cell.host_links else cell.uplinks
                table[port] = worst(table[port], level)
                touched = True
            elif (spine := spines.get(node)) is not None:
                spine.uplinks[port] = worst(spine.uplinks[port], level)
    return touched


def _rail(name: str) -> int | None:
    m = _RAIL.search(name)
    return int(m.group(1)) if m else None


def _su(name: str) -> str:
    m = _SU.search(name)
    return f"su{m.group(1)}" if m else "fabric"


def _natural(text: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def grid_json(grid: RailGrid, title: str) -> dict[str, Any]:
    """The grid as data: the same cells, counts and colors the SVG draws."""
    index = grid.by_position()
    units = []
    for su in grid.units:
        cells = []
        for rail in grid.rails:
            cell = index.get((su, rail))
            if cell is None:
                continue
            cells.append(
                {
                    "leaf": cell.name,
                    "rail": cell.rail,
                    "severity": cell.severity,
                    "hosts": len(cell.hosts),
                    "host_links": len(cell.host_links),
                    "host_links_by_severity": cell.link_counts(),
                    "uplinks": len(cell.uplinks),
                    "uplinks_up": cell.uplinks_up,
                    "uplinks_down": cell.uplinks_down(),
                    "uplinks_severity": worst(*cell.uplinks.values()),
                    "switch_severity": cell.own,
                }
            )
        units.append({"su": su, "leaves": cells})
    return {
        "title": title,
        "rails": grid.rails,
        "scalable_units": units,
        "spines": [
            {"spine": s.name, "uplinks": len(s.uplinks), "uplinks_up": s.uplinks_up, "severity": s.severity}
            for s in grid.spines.values()
        ],
        "summary": {
            "leaves": len(grid.leaves),
            "spines": len(grid.spines),
            "hosts": len({h for c in grid.leaves.values() for h in c.hosts}),
            "host_links": sum(len(c.host_links) for c in grid.leaves.values()),
            "findings_by_severity": grid.by_severity,
            "findings_off_map": grid.off_map,
        },
        "colors": COLORS,
    }


# Layout, in SVG user units (px).
CELL_W, CELL_H, GAP = 140, 58, 8
LABEL_W, TOP = 70, 96
SPINE_W, SPINE_H = 108, 30


def render_svg(grid: RailGrid, title: str) -> str:
    """Spines in rows on top, then one row per scalable unit; wide fabrics wrap units into side-by-side blocks."""
    doc = grid_json(grid, title)
    rails = grid.rails
    n_units = max(1, len(grid.units))
    block_w = LABEL_W + len(rails) * (CELL_W + GAP) + 2 * GAP
    blocks = max(1, min(n_units, round((n_units * (CELL_H + GAP) / max(block_w, 1)) ** 0.5 * 1.2)))
    per_block = -(-n_units // blocks)
    width = max(blocks * block_w, 720)
    spines_per_row = max(1, (width - 2 * GAP) // (SPINE_W + GAP))
    spine_rows = -(-len(grid.spines) // spines_per_row) if grid.spines else 0
    grid_top = TOP + spine_rows * (SPINE_H + GAP) + (28 if spine_rows else 0) + 24
    height = grid_top + per_block * (CELL_H + GAP) + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{GAP * 2}" y="28" font-size="20" font-weight="bold">{escape(title)}</text>',
        f'<text x="{GAP * 2}" y="50" font-size="13" fill="#333">{escape(_subtitle(doc))}</text>',
    ]
    out += _legend(GAP * 2, 64)
    y = TOP
    if spine_rows:
        out.append(f'<text x="{GAP * 2}" y="{y + 12}" font-size="13" font-weight="bold">spines</text>')
        y += 20
        for i, spine in enumerate(grid.spines.values()):
            row, col = divmod(i, spines_per_row)
            sx, sy = GAP * 2 + col * (SPINE_W + GAP), y + row * (SPINE_H + GAP)
            out.append(
                f'<g class="spine" data-spine={quoteattr(spine.name)} data-severity="{spine.severity}">'
                f'<rect x="{sx}" y="{sy}" width="{SPINE_W}" height="{SPINE_H}" rx="4" '
                f'fill="{TINTS[spine.severity]}" stroke="{COLORS[spine.severity]}" stroke-width="2"/>'
                f'<text x="{sx + 6}" y="{sy + 13}" font-size="11">{escape(_short(spine.name, 15))}</text>'
                f'<text x="{sx + 6}" y="{sy + 25}" font-size="10" class="uplinks-up"{_up_style(spine, "#444")}>'
                f"{escape(_spine_links(spine))}</text></g>"
            )
    index = grid.by_position()
    for b in range(blocks):
        bx = b * block_w + GAP
        out.append(f'<text x="{bx + LABEL_W}" y="{grid_top - 8}" font-size="12" font-weight="bold">rails →</text>')
        for j, rail in enumerate(rails):
            cx = bx + LABEL_W + j * (CELL_W + GAP)
            label = f"rail {rail}" if rail is not None else "rail ?"
            out.append(
                f'<text x="{cx + CELL_W // 2}" y="{grid_top + 4}" font-size="12" text-anchor="middle">{label}</text>'
            )
        for k, su in enumerate(grid.units[b * per_block : (b + 1) * per_block]):
            ry = grid_top + 12 + k * (CELL_H + GAP)
            out.append(f'<text x="{bx + 4}" y="{ry + CELL_H // 2 + 4}" font-size="12">{escape(su)}</text>')
            for j, rail in enumerate(rails):
                cell = index.get((su, rail))
                if cell is not None:
                    out.append(_cell(cell, bx + LABEL_W + j * (CELL_W + GAP), ry))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _cell(cell: LeafCell, x: int, y: int) -> str:
    sev = cell.severity
    hosts = f"{len(cell.hosts)} host{'' if len(cell.hosts) == 1 else 's'}"
    up = worst(*cell.uplinks.values())
    parts = [
        f'<g class="cell" data-leaf={quoteattr(cell.name)} data-severity="{sev}">',
        f"<title>{escape(_tooltip(cell))}</title>",
        f'<rect x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" rx="4" fill="{TINTS[sev]}" '
        f'stroke="{COLORS[sev]}" stroke-width="{3 if sev != OK else 1.5}"/>',
        f'<rect x="{x}" y="{y}" width="{CELL_W}" height="5" fill="{COLORS[up]}" class="uplinks"/>',
        f'<text x="{x + 6}" y="{y + 19}" font-size="11" font-weight="bold">{escape(_short(cell.name, 19))}</text>',
        f'<text x="{x + 6}" y="{y + 33}" font-size="10" class="uplinks-up"{_up_style(cell, "#333")}>'
        f"{escape(uplinks_text(cell))}</text>",
        f'<text x="{x + 6}" y="{y + 50}" font-size="10" fill="#333" class="hosts">{hosts}</text>',
    ]
    counts = cell.link_counts()
    total = max(1, sum(counts.values()))
    # The host-link bar follows the host count (about 6 px a character at this size).
    bx = x + 6.0 + len(hosts) * 6 + 4
    bw = x + CELL_W - 6 - bx
    for level in LEVELS:
        if counts[level]:
            w = max(2.0, bw * counts[level] / total)
            parts.append(
                f'<rect x="{bx:.1f}" y="{y + 41}" width="{w:.1f}" height="10" '
                f'fill="{COLORS[level]}" class="links-{level}"/>'
            )
            bx += w
    parts.append("</g>")
    return "".join(parts)


def uplinks_text(cell: LeafCell) -> str:
    """The cell's uplink label: ``6/8 uplinks up``; ``8 uplinks (no LLDP)`` when nothing is known to be up."""
    total, up = len(cell.uplinks), cell.uplinks_up
    if not total:
        return "no uplinks"
    if up is None:
        return f"{total} uplinks (no LLDP)"
    return f"{up}/{total} uplinks up"


def _spine_links(spine: SpineCell) -> str:
    total, up = len(spine.uplinks), spine.uplinks_up
    return f"{total} links" if up is None else f"{up}/{total} links up"


def _up_style(cell: LeafCell | SpineCell, color: str) -> str:
    """Attributes of the uplink label: bold in the error color when some uplink is down."""
    up = cell.uplinks_up
    if up is not None and up < len(cell.uplinks):
        return f' fill="{COLORS["error"]}" font-weight="bold" data-down="{len(cell.uplinks) - up}"'
    return f' fill="{color}"'


def _tooltip(cell: LeafCell) -> str:
    counts = cell.link_counts()
    bad = ", ".join(f"{n} {lvl}" for lvl, n in counts.items() if n and lvl != OK) or "none flagged"
    total, up, down = len(cell.uplinks), cell.uplinks_up, cell.uplinks_down()
    if up is None:
        uplinks = f"{total} uplinks (LLDP not collected: not known which are up)"
    else:
        uplinks = f"{up} of {total} uplinks up"
        if down:
            shown = ", ".join(down[:8]) + (f" and {len(down) - 8} more" if len(down) > 8 else "")
            uplinks += f" (not seen by LLDP: {shown})"
    return f"{cell.name} (rail {cell.rail}): {len(cell.host_links)} host links ({bad}), {uplinks}"


def _legend(x: int, y: int) -> list[str]:
    out = []
    for level in LEVELS:
        out.append(f'<rect x="{x}" y="{y}" width="14" height="14" fill="{COLORS[level]}" class="legend"/>')
        out.append(f'<text x="{x + 19}" y="{y + 12}" font-size="12">{"no finding" if level == OK else level}</text>')
        x += 110
    out.append(
        f'<text x="{x + 10}" y="{y + 12}" font-size="11" fill="#444">cell = leaf · top stripe = uplinks '
        "(up = seen by LLDP) · bar = host links by severity</text>"
    )
    return out


def _subtitle(doc: dict[str, Any]) -> str:
    s = doc["summary"]
    sev = ", ".join(f"{n} {k}" for k, n in s["findings_by_severity"].items() if n) or "no findings"
    return (
        f"{s['hosts']} hosts · {s['host_links']} host links · {s['leaves']} leaves · {s['spines']} spines — "
        f"findings: {sev}" + (f" ({s['findings_off_map']} on hosts/GPUs, not drawn)" if s["findings_off_map"] else "")
    )


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
