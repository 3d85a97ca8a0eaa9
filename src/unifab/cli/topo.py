"""``unifab topo ...``: planned vs. discovered cabling (wired into the main CLI as the ``topo`` group).

``diff`` compares the plan with LLDP / ibnetdiscover (and what NCCL assumes with nvidia-smi topo, the NCCL
topology and the jobs' NCCL_IB_HCA), ``plan`` writes a plan (rail template, NetBox or
Nautobot, a known-good ibnetdiscover, PTM topology.dot), ``show`` draws the rails (table, JSON, SVG).

Exit codes as in :mod:`unifab.cli`: 0 clean, 1 differences at or above ``--fail-on``, 2 usage or input error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from unifab.cli.common import (
    EXIT_CLEAN,
    FailOn,
    FailOnOption,
    FormatOption,
    OutputFormat,
    QuietOption,
    console,
    exit_code,
    fail,
    load_fabric,
    plural,
)
from unifab.report.text import cell  # no heavy import: Rich is imported when a cell is made

if TYPE_CHECKING:
    from rich.console import Console

    from unifab.model import Finding

__all__ = ["topo_app"]


topo_app = typer.Typer(
    help="Topology truth: the planned cabling against what LLDP sees, rails and link speed.\n\n"
    "Example: unifab topo diff ./bundle  |  unifab topo plan --gpus 256 --out plan/  |  "
    "unifab topo show ./bundle --rail-map rails.svg",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


KIND_TITLES = {
    "TOPO-MISSING": "missing cable",
    "TOPO-UNEXPECTED": "unplanned cable",
    "TOPO-MISWIRED": "miswired",
    "TOPO-RAIL": "off its rail",
    "TOPO-DEGRADED": "degraded link",
    "TOPO-PCIE-AFFINITY": "GPU↔NIC affinity",
    "TOPO-NCCL-HCA": "NCCL NIC selection",
    "TOPO-UPLINKS": "leaf uplinks below plan",
}


@topo_app.callback()
def _group() -> None:
    """Topology truth: the planned cabling against what LLDP sees, rails and link speed."""


# Where the "discovered" view of a kind comes from when it is not the cabling (LLDP / ibnetdiscover).
DISCOVERED_FROM = {
    "TOPO-PCIE-AFFINITY": "nvidia-smi topo -m and the NCCL topology",
    "TOPO-NCCL-HCA": "the job's NCCL_IB_HCA",
    "TOPO-UPLINKS": "LLDP on the leaf's uplinks",
}


def _views(f: Finding) -> tuple[str, str]:
    """The finding's "the plan says" and "discovered" cells, as table cells: each line made safe
    (:func:`unifab.report.text.cell`) before the lines are joined."""
    plan = [cell(x) for x in f.evidence.get("plan") or []]
    seen = [cell(x) for x in f.evidence.get("discovered") or []]
    if f.check in DISCOVERED_FROM:  # about one host, job or leaf: name it, and say where the view comes from
        who = cell(f.subject.get("id", ""))
        seen_lines = list(seen)
        if f.check == "TOPO-UPLINKS":
            seen_lines += [cell(f"not up: {cable}") for cable in f.evidence.get("b", {}).get("not_up", [])]
        return "\n".join([who, *plan]), "\n".join([who, *seen_lines, f"(from {DISCOVERED_FROM[f.check]})"])
    if f.check == "TOPO-DEGRADED":
        a, b = f.evidence.get("a", {}), f.evidence.get("b", {})
        want = f.evidence.get("expected_speed_mbps")
        speeds = f"{_gbps(a.get('speed_mbps'))} / {_gbps(b.get('speed_mbps'))}"
        return (f"{', '.join(plan)} at {_gbps(want)}".strip(), f"{', '.join(seen)} at {speeds}")
    rail = [cell(x) for x in f.evidence.get("rail") or []]
    seen_text = "\n".join(seen) or "nothing (no LLDP on either end)"
    if rail:
        seen_text += "\n" + "\n".join(rail)
    return "\n".join(plan) or "nothing (not in the plan)", seen_text


def _gbps(value: Any) -> str:
    return f"{value // 1000}G" if isinstance(value, int) else "?"


def _print_table(out: Console, findings: list[Finding], has_plan: bool) -> None:
    from rich.table import Table

    if not has_plan:
        out.print(
            "[yellow]no planned cabling in the bundle (plan/cabling.csv or plan/topology.dot): "
            "only rails and speed compared[/]"
        )
    if not findings:
        out.print("[green]cabling matches: no topology differences[/]")
        return
    table = Table(title=plural(len(findings), "topology difference"), show_lines=True)
    for column in ("kind", "severity", "the plan says", "discovered", "consequence"):
        table.add_column(column, overflow="fold")
    for f in findings:
        plan, seen = _views(f)
        table.add_row(
            f"{cell(f.check)}\n{KIND_TITLES.get(f.check, '')}",
            f.severity.value,
            plan,
            seen,
            cell(f.impact.get("summary", "")),
        )
    out.print(table)


@topo_app.command("diff")
def diff(
    bundle: Annotated[
        Path,
        typer.Argument(
            help="Bundle directory: plan/cabling.csv and/or plan/topology.dot, the devices' LLDP, ib/ibnetdiscover.txt."
        ),
    ],
    output: FormatOption = OutputFormat.TABLE,
    fail_on: Annotated[FailOn, typer.Option(help="Exit 1 when a difference is at least this severe.")] = FailOn.ERROR,
    quiet: QuietOption = False,
) -> None:
    """Planned vs. discovered: cables missing, unplanned, miswired (a swap is one row), off-rail or degraded (LLDP,
    ibnetdiscover); GPUs off their NIC's PCIe switch (nvidia-smi topo, NCCL topology); jobs whose NCCL_IB_HCA leaves
    out a rail; leaves with uplinks down.

    Example: unifab topo diff ./bundle --format json --fail-on warning
    """
    from unifab.checks.topology import topology_diff

    fabric = load_fabric(bundle, quiet=quiet)
    findings = topology_diff(fabric)
    has_plan = any("plan" in lk.sources for lk in fabric.links)
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps
        from unifab.report.findings_json import document

        doc = document(str(bundle), findings)
        doc["summary"]["by_kind"] = {k: sum(f.check == k for f in findings) for k in KIND_TITLES}
        doc["summary"]["plan"] = has_plan
        sys.stdout.write(dumps(doc) + "\n")
    else:
        _print_table(console(), findings, has_plan)
    raise typer.Exit(exit_code(findings, fail_on))


@topo_app.command("plan")
def plan(
    gpus: Annotated[int | None, typer.Option(help="Rail-optimized template: GPUs (a multiple of 8).")] = None,
    rails: Annotated[int, typer.Option(help="NICs (rails) per 8-GPU host: 8 on DGX/HGX.")] = 8,
    su_size: Annotated[int, typer.Option(help="Hosts per scalable unit (32 in the SuperPOD reference).")] = 32,
    spines: Annotated[
        int | None, typer.Option(help="Spine switches (default 8, fewer if leaves have fewer uplinks).")
    ] = None,
    from_netbox: Annotated[
        str | None, typer.Option("--from-netbox", help="NetBox/Nautobot base URL: read its /api/dcim/cables/.")
    ] = None,
    token: Annotated[
        str | None, typer.Option(envvar="UNIFAB_NETBOX_TOKEN", help="API token (or env UNIFAB_NETBOX_TOKEN).")
    ] = None,
    nautobot: Annotated[bool, typer.Option("--nautobot", help="The URL is Nautobot (asks for depth=2).")] = False,
    page_size: Annotated[int, typer.Option(help="Cables per API page.")] = 1000,
    insecure: Annotated[bool, typer.Option("--insecure", help="Do not verify the API's TLS certificate.")] = False,
    from_ibnetdiscover: Annotated[
        Path | None, typer.Option("--from-ibnetdiscover", help="Plan = the cables of a known-good ibnetdiscover file.")
    ] = None,
    from_dot: Annotated[Path | None, typer.Option("--from-dot", help="Plan = a PTM topology.dot file.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="cabling.csv to write (a directory gets DIR/cabling.csv).")
    ] = None,
    output: FormatOption = OutputFormat.TABLE,
) -> None:
    """Write a planned cabling (plan/cabling.csv) from a template, NetBox/Nautobot, ibnetdiscover or PTM dot.

    Exactly one source. Without --out the CSV goes to stdout; with it, a summary is printed.

    Example: unifab topo plan --gpus 256 --rails 8 --su-size 32 --spines 8 --out bundle/plan/
    Example: UNIFAB_NETBOX_TOKEN=... unifab topo plan --from-netbox https://netbox.example.com --out plan/cabling.csv
    """
    from unifab.errors import UnifabError
    from unifab.parse.plan import cabling

    sources = [x for x in (gpus, from_netbox, from_ibnetdiscover, from_dot) if x is not None]
    if len(sources) != 1:
        fail("give exactly one source: --gpus N, --from-netbox URL, --from-ibnetdiscover FILE or --from-dot FILE")
    try:
        cables, summary = _plan_cables(
            gpus,
            rails,
            su_size,
            spines,
            from_netbox,
            token,
            nautobot,
            page_size,
            insecure,
            from_ibnetdiscover,
            from_dot,
        )
    except UnifabError as exc:
        fail(str(exc))
    text = cabling.dump(cables)
    if out is None:
        sys.stdout.write(text)
        raise typer.Exit(EXIT_CLEAN)
    target = out / "cabling.csv" if out.is_dir() or str(out).endswith("/") else out
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror}")
    summary = {"out": str(target), "cables": len(cables), **summary}
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps

        sys.stdout.write(dumps(summary) + "\n")
    else:
        stdout = console()
        stdout.print(f"[green]wrote {plural(len(cables), 'planned cable')} to {cell(target)}[/]")
        for key, value in summary.items():
            if key not in ("out", "cables", "skipped"):
                stdout.print(f"  {cell(key)}: {cell(value)}")
        for skipped in summary.get("skipped", []):
            stdout.print(f"  [yellow]skipped cable {cell(skipped['cable'])}: {cell(skipped['reason'])}[/]")
    raise typer.Exit(EXIT_CLEAN)


def _plan_cables(
    gpus: int | None,
    rails: int,
    su_size: int,
    spines: int | None,
    netbox_url: str | None,
    token: str | None,
    nautobot: bool,
    page_size: int,
    insecure: bool,
    ibnetdiscover_file: Path | None,
    dot_file: Path | None,
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The cables of the one source given, and what to tell about them."""
    from unifab.errors import UsageError

    if gpus is not None:
        from unifab.twin import rail_template

        shape = rail_template.shape(gpus, rails, su_size, spines)
        summary: dict[str, Any] = {
            "hosts": shape.hosts,
            "scalable_units": shape.scalable_units,
            "leaves": shape.leaves,
            "spines": shape.spines,
            "uplinks_per_leaf": shape.uplinks_per_leaf,
        }
        return rail_template.plan(shape), summary
    if netbox_url is not None:
        from unifab.collect.netbox import TOKEN_ENV, fetch_cables
        from unifab.parse.plan import netbox_cables

        if not token:
            raise UsageError(f"--from-netbox needs an API token: --token or the {TOKEN_ENV} environment variable")
        fetched = fetch_cables(netbox_url, token, nautobot=nautobot, page_size=page_size, verify=not insecure)
        cables, skipped = netbox_cables.planned(fetched.cables)
        summary = {
            "pages": fetched.pages,
            "source_cables": len(fetched.cables),
            "skipped": [{"cable": s.cable, "reason": s.reason} for s in skipped],
        }
        return cables, summary
    path = ibnetdiscover_file if ibnetdiscover_file is not None else dot_file
    assert path is not None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if ibnetdiscover_file is not None:
        from unifab.parse.ib import ibnetdiscover
        from unifab.parse.plan.cabling import PlannedCable

        named = ibnetdiscover.named_links(ibnetdiscover.parse(text, str(path)))
        return tuple(PlannedCable(lk.a_node, lk.a_port, lk.b_node, lk.b_port, None) for lk in named), {}
    from unifab.parse.plan import topology_dot

    return topology_dot.parse(text, str(path)).planned(), {}


@topo_app.command("show")
def show(
    bundle: Annotated[Path, typer.Argument(help="Bundle directory.")],
    rail_map: Annotated[
        Path | None, typer.Option("--rail-map", help="Write the rail map picture (SVG) to this file.")
    ] = None,
    output: FormatOption = OutputFormat.TABLE,
    fail_on: FailOnOption = FailOn.ERROR,
    quiet: QuietOption = False,
) -> None:
    """The rails at a glance: scalable units by rails, one cell per leaf, colored by the worst finding of all checks.

    Example: unifab topo show ./bundle --rail-map rails.svg --format json
    """
    from unifab.checks.runner import run_checks
    from unifab.report import railmap

    fabric = load_fabric(bundle, quiet=quiet)
    findings = run_checks(fabric)
    grid = railmap.rail_grid(fabric, findings)
    units, rails = len(grid.units), len(grid.rails)
    title = (
        f"Rail map of {bundle.name or bundle}: {units} scalable unit{'s' * (units != 1)} × "
        f"{rails} rail{'s' * (rails != 1)}"
    )
    doc = railmap.grid_json(grid, title)
    if rail_map is not None:
        try:
            rail_map.write_text(railmap.render_svg(grid, title), encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {rail_map}: {exc.strerror}")
        doc["rail_map"] = str(rail_map)
    if output is OutputFormat.JSON:
        from unifab.jsonify import dumps

        sys.stdout.write(dumps(doc) + "\n")
    else:
        _print_grid(console(), doc)
    raise typer.Exit(exit_code(findings, fail_on))


_STYLE = {"critical": "bold white on red", "error": "bold red", "warning": "yellow", "info": "cyan", "ok": "green"}


def _print_grid(out: Console, doc: dict[str, Any]) -> None:
    """One table per fabric kind (``doc["sections"]``, :meth:`RailGrid.section` of each of
    :meth:`RailGrid.fabrics`): a mixed bundle's Ethernet (RoCE) grid, then its InfiniBand one, each with its own
    rails, units and summary; a one-fabric bundle prints its one grid under the title alone."""
    sections = doc["sections"]
    for section in sections:
        title = doc["title"] if len(sections) == 1 else f"{doc['title']} — {section['label']}"
        _print_section(out, section, title)
    if "rail_map" in doc:
        out.print(f"rail map written to {cell(doc['rail_map'])}")


def _print_section(out: Console, doc: dict[str, Any], title: str) -> None:
    from rich.table import Table

    table = Table(title=cell(title), show_lines=False)
    table.add_column("SU")
    for rail in doc["rails"]:
        table.add_column(f"rail {rail}" if rail is not None else "rail ?", overflow="fold")
    for unit in doc["scalable_units"]:
        by_rail = {c["rail"]: c for c in unit["leaves"]}
        row = [cell(unit["su"])]
        for rail in doc["rails"]:
            leaf = by_rail.get(rail)
            if leaf is None:
                row.append("")
                continue
            bad = sum(n for k, n in leaf["host_links_by_severity"].items() if k != "ok")
            style = _STYLE[leaf["severity"]]
            row.append(f"[{style}]{leaf['severity']}[/] {bad}/{leaf['host_links']}")
        table.add_row(*row)
    out.print(table)
    s = doc["summary"]
    spines = ", ".join(f"{cell(sp['spine'])}:{sp['severity']}" for sp in doc["spines"] if sp["severity"] != "ok")
    out.print(
        f"{s['leaves']} leaves, {s['spines']} spines ({spines or 'all clean'}); cells: worst severity, "
        "flagged/total host links"
    )


def _register_export() -> None:
    from unifab.cli import topo_export

    topo_export.register(topo_app)


_register_export()
