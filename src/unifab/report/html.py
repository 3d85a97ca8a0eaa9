"""A self-contained HTML report (inline CSS and SVG, no external assets) of one check run."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from unifab.jsonify import dumps
from unifab.model import Finding, Severity

SEVERITY_COLOR = {
    Severity.CRITICAL: "#b91c1c",
    Severity.ERROR: "#ea580c",
    Severity.WARNING: "#ca8a04",
    Severity.INFO: "#2563eb",
}


@dataclass(frozen=True, slots=True)
class CheckGroup:
    check: str
    title: str
    why: str
    severity: Severity
    findings: list[Finding]


def _groups(findings: Sequence[Finding], specs: dict[str, tuple[str, str]]) -> list[CheckGroup]:
    by_check: dict[str, list[Finding]] = {}
    for f in findings:
        by_check.setdefault(f.check, []).append(f)
    groups = [
        CheckGroup(check, *specs.get(check, ("", "")), max((f.severity for f in fs), key=lambda s: s.rank), fs)
        for check, fs in by_check.items()
    ]
    return sorted(groups, key=lambda g: (-g.severity.rank, g.check))


def render_html(
    bundle: str,
    findings: Sequence[Finding],
    specs: dict[str, tuple[str, str]],
    facts: dict[str, int],
) -> str:
    """``specs`` maps check id → (title, why); ``facts`` holds counts shown in the header."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("unifab.report"), autoescape=select_autoescape(["html", "j2"]))
    env.filters["json"] = dumps
    groups = _groups(findings, specs)
    counts = Counter(f.severity for f in findings)
    widest = max((len(g.findings) for g in groups), default=1)
    return env.get_template("report.html.j2").render(
        bundle=bundle,
        generated=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        facts=facts,
        groups=groups,
        severities=[(s, counts.get(s, 0), SEVERITY_COLOR[s]) for s in sorted(Severity, key=lambda s: -s.rank)],
        colors={s.value: c for s, c in SEVERITY_COLOR.items()},
        widest=widest,
        total=len(findings),
    )


def write_html(path: Path, html: str) -> None:
    """Write via a temporary file and rename, so a reader never sees half a report."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(path)
