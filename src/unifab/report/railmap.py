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

Every leaf and spine has the fabric kind of its switch (``roce`` or ``ib``; a planned leaf that was not
collected takes the kind of its cables). :meth:`RailGrid.section` is the grid of one kind, with its own scalable
units, rails and spines: a bundle with a RoCE backend and an InfiniBand network draws an Ethernet (RoCE) section
and an InfiniBand section, each with its own leaves, spines and uplink counts; a one-fabric bundle draws one grid,
as before. A cable between a leaf and a switch of the other kind is not an uplink (the silos are separate).

Each cell counts the uplinks that are up, as TOPO-UPLINKS does: an uplink (a leaf port cabled, planned or
seen, to a spine) is up when LLDP sees a cable on it; a planned one LLDP does not see is down ("6/8 uplinks
up"). A switch that reports no LLDP at all says nothing about which are up: its cell gives the uplinks it has
and "no LLDP" instead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from xml.sax import saxutils

from unifab.model import FABRIC_KINDS, Fabric, Finding, Severity
from unifab.report.text import display

__all__ = [
    "COLORS",
    "FABRIC_LABELS",
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
FABRIC_LABELS = {"roce": "Ethernet (RoCE)", "ib": "InfiniBand"}
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
    fabric: str = "roce"  # the switch's kind (model.FABRIC_KINDS); an uncollected leaf: its cables' kind
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
    fabric: str = "roce"
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
    # Per fabric kind, the findings that touch a cell of it, by severity (one finding may touch both kinds).
    by_fabric: dict[str, dict[str, int]] = field(default_factory=dict)

    def fabrics(self) -> list[str]:
        """The fabric kinds that have a leaf or a spine, RoCE first (empty for an empty grid)."""
        kinds = {c.fabric for c in self.leaves.values()} | {s.fabric for s in self.spines.values()}
        return [k for k in FABRIC_KINDS if k in kinds]

    def section(self, kind: str) -> RailGrid:
        """The grid of one fabric kind: its leaves and spines, its own units and rails, the findings touching it
        (``off_map`` is 0: the findings on no cell are counted once, by the whole grid)."""
        leaves = {n: c for n, c in self.leaves.items() if c.fabric == kind}
        counts = self.by_fabric.get(kind, {})
        return RailGrid(
            leaves,
            {n: s for n, s in self.spines.items() if s.fabric == kind},
            _units(leaves.values()),
            _rails(leaves.values()),
            {level: counts.get(level, 0) for level in self.by_severity},
            0,
            {kind: counts},
        )

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
            switch = fabric.switches.get(sw_end.node)
            kind = switch.fabric if switch is not None else fabric.link_fabric(lk)
            cell = leaves[sw_end.node] = LeafCell(sw_end.node, _su(sw_end.node), _rail(sw_end.node), kind)
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
        if (spine_switch := fabric.switches.get(spine.node)) is None:
            continue
        cell = leaves[leaf.node]
        if spine_switch.fabric != cell.fabric:
            continue  # not an uplink of this silo (a gateway or a miscabled port)
        spine_cell = spines.setdefault(spine.node, SpineCell(spine.node, spine_switch.fabric))
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
    by_fabric: dict[str, Counter[str]] = {}
    for f in findings:
        level = f.severity.value
        by_severity[level] += 1
        kinds = _fold(f, level, leaves, spines, link_ends, nic_link)
        if not kinds:
            off_map += 1
        for kind in kinds:
            by_fabric.setdefault(kind, Counter())[level] += 1
    levels = [s.value for s in sorted(Severity, key=lambda s: -s.rank)]
    return RailGrid(
        leaves,
        dict(sorted(spines.items(), key=lambda kv: _natural(kv[0]))),
        _units(leaves.values()),
        _rails(leaves.values()),
        {level: by_severity.get(level, 0) for level in levels},
        off_map,
        {k: {level: c.get(level, 0) for level in levels} for k, c in by_fabric.items()},
    )


def _units(cells: Iterable[LeafCell]) -> list[str]:
    return sorted({c.su for c in cells}, key=_natural)


def _rails(cells: Iterable[LeafCell]) -> list[int | None]:
    return sorted({c.rail for c in cells}, key=lambda r: (r is None, r or 0))


def _fold(
    f: Finding,
    level: str,
    leaves: dict[str, LeafCell],
    spines: dict[str, SpineCell],
    link_ends: dict[str, tuple[tuple[str, str], ...]],
    nic_link: dict[tuple[str, str], str],
) -> set[str]:
    """Fold one finding onto the cells it touches; the fabric kinds of the leaves and spines it touched."""
    touched: set[str] = set()
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
                touched.add(target.fabric)
        if link is None:
            continue
        for node, port in link_ends[link]:
            if (cell := leaves.get(node)) is not None:
                table = cell.host_links if port in cell.host_links else cell.uplinks
                table[port] = worst(table[port], level)
                touched.add(cell.fabric)
            elif (spine := spines.get(node)) is not None:
                spine.uplinks[port] = worst(spine.uplinks[port], level)
                touched.add(spine.fabric)
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
    """The grid as data: the same cells, counts and colors the SVG draws.

    The top level is the whole grid (``rails``, ``scalable_units``, ``spines``, ``summary``); ``sections`` is the
    same per fabric kind (each with ``fabric`` and ``label`` too): one section for a one-fabric bundle, an Ethernet
    (RoCE) section and an InfiniBand section for a mixed one, each with its own rails, units, spines and counts.
    """
    whole = _grid_doc(grid)
    kinds = grid.fabrics()
    if len(kinds) <= 1:
        kind = kinds[0] if kinds else FABRIC_KINDS[0]
        sections = [{"fabric": kind, "label": FABRIC_LABELS[kind], **whole}]
    else:
        sections = [{"fabric": k, "label": FABRIC_LABELS[k], **_grid_doc(grid.section(k))} for k in kinds]
    return {"title": title, **whole, "fabrics": kinds, "sections": sections, "colors": COLORS}


def _grid_doc(grid: RailGrid) -> dict[str, Any]:
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
                    "fabric": cell.fabric,
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
    reporting = [c.uplinks_up for c in grid.leaves.values() if c.uplinks_up is not None]
    return {
        "rails": grid.rails,
        "scalable_units": units,
        "spines": [
            {
                "spine": s.name,
                "fabric": s.fabric,
                "uplinks": len(s.uplinks),
                "uplinks_up": s.uplinks_up,
                "severity": s.severity,
            }
            for s in grid.spines.values()
        ],
        "summary": {
            "leaves": len(grid.leaves),
            "spines": len(grid.spines),
            "hosts": len({h for c in grid.leaves.values() for h in c.hosts}),
            "host_links": sum(len(c.host_links) for c in grid.leaves.values()),
            "uplinks": sum(len(c.uplinks) for c in grid.leaves.values()),
            # Uplinks LLDP sees, on the leaves that report LLDP (None: no leaf does)
            "uplinks_up": sum(reporting) if reporting else None,
            "findings_by_severity": grid.by_severity,
            "findings_off_map": grid.off_map,
        },
    }


# Layout, in SVG user units (px).
CELL_W, CELL_H, GAP = 140, 58, 8
LABEL_W, TOP = 70, 96
SPINE_W, SPINE_H = 108, 30


def render_svg(grid: RailGrid, title: str) -> str:
    """Spines in rows on top, then one row per scalable unit; wide fabrics wrap units into side-by-side blocks.

    A grid of more than one fabric kind draws one such section per kind (RoCE first), one under the other,
    each under a heading with its own counts."""
    doc = grid_json(grid, title)
    kinds = grid.fabrics()
    sections = [(grid, None)] if len(kinds) <= 1 else [(grid.section(k), k) for k in kinds]
    layouts = [_Layout(g) for g, _ in sections]
    width = max(720, *(lay.width for lay in layouts))
    body: list[str] = []
    y = TOP
    for (section, kind), lay in zip(sections, layouts, strict=True):
        if kind is not None:
            body.append(
                f'<text x="{GAP * 2}" y="{y + 14}" font-size="16" font-weight="bold" class="section" '
                f'data-fabric="{kind}">{escape(_section_heading(kind, section))}</text>'
            )
            y += SECTION_H
        body += _section_svg(section, lay, width, y)
        y += lay.height(width)
    height = y + 16  # 40 px under the last row of cells
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{GAP * 2}" y="28" font-size="20" font-weight="bold">{escape(title)}</text>',
        f'<text x="{GAP * 2}" y="50" font-size="13" fill="#333">{escape(_subtitle(doc))}</text>',
    ]
    out += _legend(GAP * 2, 64)
    out += body
    out.append("</svg>")
    return "\n".join(out) + "\n"


SECTION_H = 28  # a section's heading


class _Layout:
    """Where one section's blocks of scalable units go."""

    def __init__(self, grid: RailGrid) -> None:
        n_units = max(1, len(grid.units))
        self.n_spines = len(grid.spines)
        self.block_w = LABEL_W + len(grid.rails) * (CELL_W + GAP) + 2 * GAP
        self.blocks: int = max(1, min(n_units, round((n_units * (CELL_H + GAP) / max(self.block_w, 1)) ** 0.5 * 1.2)))
        self.per_block: int = -(-n_units // self.blocks)
        self.width = self.blocks * self.block_w

    def spine_rows(self, width: int) -> tuple[int, int]:
        """(spines per row, rows of spines) at this drawing width."""
        per_row = max(1, (width - 2 * GAP) // (SPINE_W + GAP))
        return per_row, (-(-self.n_spines // per_row) if self.n_spines else 0)

    def grid_top(self, width: int) -> int:
        """The rail labels' baseline below the section's top (its spines above them)."""
        rows = self.spine_rows(width)[1]
        return rows * (SPINE_H + GAP) + (28 if rows else 0) + 24

    def height(self, width: int) -> int:
        """The section from its top to the top of the next (24 px under the last row of cells)."""
        return self.grid_top(width) + self.per_block * (CELL_H + GAP) + 24


def _section_svg(grid: RailGrid, lay: _Layout, width: int, top: int) -> list[str]:
    out: list[str] = []
    spines_per_row, spine_rows = lay.spine_rows(width)
    grid_top = top + lay.grid_top(width)
    y = top
    if spine_rows:
        out.append(f'<text x="{GAP * 2}" y="{y + 12}" font-size="13" font-weight="bold">spines</text>')
        y += 20
        for i, spine in enumerate(grid.spines.values()):
            row, col = divmod(i, spines_per_row)
            sx, sy = GAP * 2 + col * (SPINE_W + GAP), y + row * (SPINE_H + GAP)
            out.append(
                f'<g class="spine" data-spine={quoteattr(spine.name)} data-severity="{spine.severity}" '
                f'data-fabric="{spine.fabric}">'
                f'<rect x="{sx}" y="{sy}" width="{SPINE_W}" height="{SPINE_H}" rx="4" '
                f'fill="{TINTS[spine.severity]}" stroke="{COLORS[spine.severity]}" stroke-width="2"/>'
                f'<text x="{sx + 6}" y="{sy + 13}" font-size="11">{escape(_short(spine.name, 15))}</text>'
                f'<text x="{sx + 6}" y="{sy + 25}" font-size="10" class="uplinks-up"{_up_style(spine, "#444")}>'
                f"{escape(_spine_links(spine))}</text></g>"
            )
    index = grid.by_position()
    rails = grid.rails
    for b in range(lay.blocks):
        bx = b * lay.block_w + GAP
        out.append(f'<text x="{bx + LABEL_W}" y="{grid_top - 8}" font-size="12" font-weight="bold">rails →</text>')
        for j, rail in enumerate(rails):
            cx = bx + LABEL_W + j * (CELL_W + GAP)
            label = f"rail {rail}" if rail is not None else "rail ?"
            out.append(
                f'<text x="{cx + CELL_W // 2}" y="{grid_top + 4}" font-size="12" text-anchor="middle">{label}</text>'
            )
        for k, su in enumerate(grid.units[b * lay.per_block : (b + 1) * lay.per_block]):
            ry = grid_top + 12 + k * (CELL_H + GAP)
            out.append(f'<text x="{bx + 4}" y="{ry + CELL_H // 2 + 4}" font-size="12">{escape(su)}</text>')
            for j, rail in enumerate(rails):
                cell = index.get((su, rail))
                if cell is not None:
                    out.append(_cell(cell, bx + LABEL_W + j * (CELL_W + GAP), ry))
    return out


def _section_heading(kind: str, grid: RailGrid) -> str:
    leaves, spines = len(grid.leaves), len(grid.spines)
    reporting = [c for c in grid.leaves.values() if c.uplinks_up is not None]
    if reporting:
        up, total = sum(c.uplinks_up or 0 for c in reporting), sum(len(c.uplinks) for c in reporting)
        uplinks = f"{up}/{total} uplinks up"
        if len(reporting) < leaves:
            uplinks += f" ({leaves - len(reporting)} without LLDP)"
    else:
        uplinks = f"{sum(len(c.uplinks) for c in grid.leaves.values())} uplinks (no LLDP)"
    return (
        f"{FABRIC_LABELS[kind]}: {leaves} lea{'f' if leaves == 1 else 'ves'} · "
        f"{spines} spine{'' if spines == 1 else 's'} · {uplinks}"
    )


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
