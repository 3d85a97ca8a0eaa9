"""Results as data: each figure returns rows (measured value, target, verdict); writers make JSON and Markdown.

A verdict is computed from the measured value and the target, never written by hand:

* ``pass``    — measured and within the target;
* ``MISSED``  — measured and outside the target (said plainly, in capitals);
* ``NOT RUN`` — the row has a target but could not be measured in this run (the note says why);
* ``info``    — no target; a number worth keeping next to the others.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

Verdict = Literal["pass", "MISSED", "NOT RUN", "info"]

_OPS = {"<=": operator.le, ">=": operator.ge, "==": operator.eq}
_SYMBOL = {"<=": "≤", ">=": "≥", "==": "="}


@dataclass(frozen=True, slots=True)
class Target:
    op: Literal["<=", ">=", "=="]
    bound: float
    unit: str = ""

    def met_by(self, value: float) -> bool:
        return bool(_OPS[self.op](value, self.bound))

    def __str__(self) -> str:
        return f"{_SYMBOL[self.op]} {fmt_number(self.bound)}{_unit_suffix(self.unit)}"


@dataclass(frozen=True, slots=True)
class Row:
    """One measured figure: ``value`` in ``unit``; ``None`` when it could not be measured."""

    figure: str
    case: str
    metric: str
    value: float | None
    unit: str = ""
    target: Target | None = None
    note: str = ""

    @property
    def verdict(self) -> Verdict:
        if self.target is None:
            return "info"
        if self.value is None or (isinstance(self.value, float) and math.isnan(self.value)):
            return "NOT RUN"
        return "pass" if self.target.met_by(self.value) else "MISSED"

    def measured(self) -> str:
        if self.value is None:
            return "—"
        return f"{fmt_number(self.value)}{_unit_suffix(self.unit)}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "figure": self.figure,
            "case": self.case,
            "metric": self.metric,
            "value": self.value,
            "unit": self.unit,
            "target": None if self.target is None else {**asdict(self.target), "text": str(self.target)},
            "verdict": self.verdict,
        }
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Row:
        t = data.get("target")
        target = None if t is None else Target(t["op"], float(t["bound"]), t.get("unit", ""))
        unit, note = data.get("unit", ""), data.get("note", "")
        return cls(data["figure"], data["case"], data["metric"], data["value"], unit, target, note)


@dataclass(slots=True)
class FigureResult:
    """What one figure module returns: its rows, its one summary line, and notes for the report."""

    name: str
    title: str
    rows: list[Row] = field(default_factory=list)
    headline: str = ""
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None  # the whole figure could not run: why
    seconds: float = 0.0
    # where and when it was measured: commit, dirty, date, machine, command (see :func:`provenance`)
    measured_on: dict[str, Any] = field(default_factory=dict)

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        return row

    @property
    def missed(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == "MISSED"]

    @property
    def not_run(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == "NOT RUN"]

    def summary_line(self) -> str:
        """The one line printed per figure: the headline and the verdict counts."""
        if self.skipped:
            return f"[{self.name}] SKIPPED: {self.skipped}"
        targets = [r for r in self.rows if r.target is not None]
        verdict = ""
        if targets:
            passed = sum(r.verdict == "pass" for r in targets)
            verdict = f" — targets: {passed}/{len(targets)} pass"
            if self.missed:
                verdict += f", MISSED {len(self.missed)}"
            if self.not_run:
                verdict += f", not run {len(self.not_run)}"
        return f"[{self.name}] {self.headline}{verdict}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "headline": self.headline,
            "summary": self.summary_line(),
            "skipped": self.skipped,
            "seconds": round(self.seconds, 2),
            "rows": [r.to_json() for r in self.rows],
            "notes": self.notes,
            "measured_on": self.measured_on,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], meta: dict[str, Any] | None = None) -> FigureResult:
        """A figure read back from a results file; one written before provenance takes its run's ``meta``."""
        fig = cls(
            data["name"],
            data["title"],
            [Row.from_json(r) for r in data.get("rows", [])],
            data.get("headline", ""),
            list(data.get("notes", [])),
            data.get("skipped"),
            float(data.get("seconds", 0.0)),
            dict(data.get("measured_on") or {}),
        )
        if not fig.measured_on and meta is not None:
            fig.measured_on = provenance(meta)
        return fig


def provenance(meta: dict[str, Any]) -> dict[str, Any]:
    """Where and when a run measured its figures: the commit, the date, the machine, the command."""
    machine = meta.get("machine", {})
    return {
        "commit": machine.get("git_commit"),
        "dirty": machine.get("git_dirty"),
        "date": meta.get("started"),
        "machine": f"{machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, "
        f"{machine.get('memory_gib', '?')} GiB, {machine.get('os', '?')}, Python {machine.get('python', '?')}",
        "command": meta.get("command"),
    }


def short_provenance(p: dict[str, Any]) -> str:
    commit = str(p.get("commit") or "?")[:10] + ("+dirty" if p.get("dirty") else "")
    return f"{commit} {str(p.get('date') or '?')[:10]}"


def merge_figures(
    previous: Sequence[FigureResult], fresh: Sequence[FigureResult], order: Sequence[str]
) -> list[FigureResult]:
    """The previous results with ``fresh`` figures replacing theirs, in the harness's figure order."""
    by_name = {f.name: f for f in previous}
    by_name.update((f.name, f) for f in fresh)
    rank = {name: i for i, name in enumerate(order)}
    return sorted(by_name.values(), key=lambda f: rank.get(f.name, len(rank)))


def read_results(path: Path) -> tuple[list[FigureResult], dict[str, Any]] | None:
    """A results JSON file back as figures and meta; ``None`` when absent or not one."""
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        meta = doc["meta"]
        return [FigureResult.from_json(f, meta) for f in doc["figures"]], meta
    except (ValueError, KeyError, TypeError):
        return None


def fmt_number(x: float) -> str:
    """Readable numbers: thousands separators for large ones, three significant digits for small."""
    if isinstance(x, bool):
        return str(x)
    if x == 0:
        return "0"
    if math.isinf(x) or math.isnan(x):
        return str(x)
    ax = abs(x)
    if float(x).is_integer() and ax >= 1:
        return f"{int(x):,}"
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax >= 100:
        return f"{x:.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _unit_suffix(unit: str) -> str:
    if not unit:
        return ""
    return unit if unit in ("×", "%") else f" {unit}"


def to_json(figures: Sequence[FigureResult], meta: dict[str, Any]) -> str:
    doc = {"meta": meta, "figures": [f.to_json() for f in figures]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(figures: Sequence[FigureResult], meta: dict[str, Any]) -> str:
    """The results table for people: machine, one summary line per figure, then every row."""
    machine = meta.get("machine", {})
    lines = [
        "# unifab benchmark results",
        "",
        f"Run: `{meta.get('command', 'python -m bench')}` — {meta.get('mode', '?')} mode, "
        f"started {meta.get('started', '?')}, took {fmt_number(float(meta.get('seconds', 0)))} s.",
        "",
        "Machine: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in machine.items() if v is not None) + ".",
        "",
    ]
    for update in meta.get("updates", []):
        lines += [
            f"Updated: `{update.get('command')}` started {update.get('started')}, took "
            f"{fmt_number(float(update.get('seconds', 0)))} s, re-measured {', '.join(update.get('figures', []))}.",
            "",
        ]
    lines += [
        "Every number below was measured in the run named in its figure's provenance; ratios compare two "
        "measurements from the same run. Verdicts are computed from the value and the target: `MISSED` means "
        "the target is not met, `NOT RUN` that it could not be measured here (see the note).",
        "",
        "## Summary",
        "",
    ]
    lines += [f"- `{_cell(f.summary_line())}`" for f in figures]
    lines += [
        "",
        "## Provenance",
        "",
        "| figure | commit | date | machine | command |",
        "|---|---|---|---|---|",
    ]
    for f in figures:
        p = f.measured_on
        commit = str(p.get("commit") or "?")[:12] + (" (dirty)" if p.get("dirty") else "")
        lines.append(
            f"| {f.name} | {commit} | {p.get('date') or '?'} | {_cell(str(p.get('machine') or '?'))} | "
            f"`{_cell(str(p.get('command') or '?'))}` |"
        )
    missed = [r for f in figures for r in f.missed]
    not_run = [r for f in figures for r in f.not_run]
    lines += ["", "## Targets missed", ""]
    if missed:
        lines += [
            f"- **MISSED** {r.figure} / {r.case}: {r.metric} = {r.measured()} (target {r.target})"
            + (f" — {r.note}" if r.note else "")
            for r in missed
        ]
    else:
        lines.append("- none")
    if not_run:
        lines += ["", "Targets not measured in this run:", ""]
        lines += [f"- {r.figure} / {r.case}: {r.metric} (target {r.target}) — {r.note or 'not run'}" for r in not_run]
    lines += [
        "",
        "## All figures",
        "",
        "| figure | measured on | case | metric | measured | target | result | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f in figures:
        when = short_provenance(f.measured_on) if f.measured_on else ""
        if f.skipped:
            lines.append(f"| {f.name} | {when} | — | — | — | — | skipped | {_cell(f.skipped)} |")
        for r in f.rows:
            verdict = f"**{r.verdict}**" if r.verdict == "MISSED" else r.verdict
            lines.append(
                f"| {r.figure} | {when} | {_cell(r.case)} | {_cell(r.metric)} | {r.measured()} | "
                f"{_cell(str(r.target)) if r.target else ''} | {verdict} | {_cell(r.note)} |"
            )
    notes = [(f.name, n) for f in figures for n in f.notes]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- **{name}**: {n}" for name, n in notes]
    return "\n".join(lines) + "\n"


def write_results(out_dir: Path, figures: Sequence[FigureResult], meta: dict[str, Any], stem: str) -> list[Path]:
    """Write ``<stem>.json`` and ``<stem>.md`` into ``out_dir``; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{stem}.json"
    md_path = out_dir / f"{stem}.md"
    json_path.write_text(to_json(figures, meta), encoding="utf-8")
    md_path.write_text(to_markdown(figures, meta), encoding="utf-8")
    return [json_path, md_path]
