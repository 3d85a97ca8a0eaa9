"""A self-contained HTML report (inline CSS, SVG and script, no external assets) of one check run.

Every device-provided string (names, ports, messages, evidence, commands) goes through Jinja's autoescape,
and before it through :func:`unifab.report.text.display` (the template's ``finalize``): control characters and
terminal escapes show as ``\\x1b``; device output is untrusted. The only unescaped markup is the report's own
script, and a Content-Security-Policy ``<meta>`` allows that script alone (by its hash), no other script, inline
handler or network fetch, so a name that slipped past escaping still could not run or phone home.

Each finding is a ``<details>``; its evidence is one box per end (``a``/``b``), each captioned with the device
and end the evidence names (``leaf-su1-r3 · Ethernet12 (switch end)``, ``gpu001 · eth3 / mlx5_3 (host end)``),
plus one box for the rest (plan, discovered, recable steps, affected links).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from unifab.jsonify import dumps
from unifab.model import Finding, Severity
from unifab.report.text import display

__all__ = [
    "SCRIPT",
    "SEVERITY_COLOR",
    "CheckGroup",
    "EvidenceBox",
    "content_security_policy",
    "end_box",
    "evidence_boxes",
    "render_html",
    "script_hash",
    "write_html",
]

SEVERITY_COLOR = {
    Severity.CRITICAL: "#b91c1c",
    Severity.ERROR: "#ea580c",
    Severity.WARNING: "#ca8a04",
    Severity.INFO: "#2563eb",
}

# "Expand all" / "Collapse all": open or close every finding's <details>. The buttons are hidden until this
# runs, so a reader without script sees no dead controls.
SCRIPT = """
(function () {
  var bar = document.getElementById("toggles");
  if (!bar) return;
  bar.hidden = false;
  var buttons = bar.querySelectorAll("button[data-open]");
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener("click", function (event) {
      var open = event.currentTarget.getAttribute("data-open") === "true";
      var all = document.querySelectorAll("details.finding");
      for (var j = 0; j < all.length; j++) all[j].open = open;
    });
  }
})();
"""


def script_hash(script: str = SCRIPT) -> str:
    """The CSP source that allows exactly ``script`` as an inline ``<script>`` (``'sha256-…'``)."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def content_security_policy(script: str = SCRIPT) -> str:
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src {script_hash(script)}; base-uri 'none'; form-action 'none'"
    )


@dataclass(frozen=True, slots=True)
class CheckGroup:
    check: str
    title: str
    why: str
    severity: Severity
    findings: list[Finding]


@dataclass(frozen=True, slots=True)
class EvidenceBox:
    """One box of a finding's evidence: what it is about (device, port or NIC, end) and its JSON."""

    label: str  # "leaf-su1-r3 · Ethernet12"
    end: str | None  # "switch end", "host end", "switch", "host", "job"; None when the evidence does not say
    body: str  # JSON
    wide: bool = False  # spans both columns

    @property
    def caption(self) -> str:
        return f"{self.label} ({self.end})" if self.end else self.label


def _text(value: Any) -> str | None:
    """A scalar evidence value as text; ``None`` for missing, empty and structured values."""
    if value is None or isinstance(value, dict | list | tuple | set | frozenset) or value == "":
        return None
    return str(value)


def _local(value: Any, kind: str, device: str | None) -> str | None:
    """``port:leaf03:Ethernet12`` → ``Ethernet12``, ``nic:gpu001:mlx5_3`` → ``mlx5_3``; other text as it is."""
    text = _text(value)
    if text is not None and device is not None:
        text = text.removeprefix(f"{kind}:{device}:")
    return text


def end_box(side: Mapping[str, Any], finding: Finding, fallback: str, *, links: int = 0) -> EvidenceBox:
    """Caption one end's evidence with its device and end, from the keys the checks put there.

    ``port`` is a switch end, ``netdev``/``nic`` a host end, ``job`` a job; an end naming only its device is
    the subject's kind (``switch``, ``host``). ``links``: set on the NIC side of a switch-wide finding over that
    many host links, which keeps the NICs' common values but names no one NIC.
    """
    device = _text(side.get("device"))
    job = _text(side.get("job"))
    port = _local(side.get("port"), "port", device)
    netdev = _text(side.get("netdev"))
    nic = _local(side.get("nic"), "nic", device)
    where: list[str] = []
    end: str | None = None
    if port is not None:
        where, end = [port], "switch end"
    elif netdev is not None or nic is not None:
        where = list(dict.fromkeys(n for n in (netdev, nic) if n is not None))
        end = "host end"
    elif job is not None and device is None:
        end = "job"
    elif device is not None:
        kind = finding.subject.get("kind")
        config = finding.subject.get("config")
        if kind == "switch" and config:
            where, end = [config], "switch end"
        elif kind in ("switch", "host"):
            end = kind
    who = device or job
    if who is None:
        if links:
            who, end = f"NICs of the {links} links", "host end"
        else:
            who = fallback
    label = " · ".join([who, " / ".join(where)]) if where else who
    return EvidenceBox(label, end, dumps(side))


def evidence_boxes(finding: Finding) -> list[EvidenceBox]:
    """The finding's evidence as captioned boxes: each end, then whatever else it carries."""
    ev = finding.evidence
    a, b = ev.get("a"), ev.get("b")
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        device = _text(ev.get("device"))
        return [EvidenceBox(device or "evidence", None, dumps(ev), wide=True)] if ev else []
    links = ev.get("links")
    n_links = len(links) if isinstance(links, list) else 0
    # A switch-wide finding (one shared map or profile): side b is the switch, side a the NICs of every link.
    switch_wide = n_links > 0 and _text(b.get("port")) is None
    # Facing a job, the end without a device is what the fabric has (its RoCE class, its rail NICs).
    a_name, b_name = ("fabric", "fabric") if "job" in a or "job" in b else ("side A", "side B")
    boxes = [end_box(a, finding, a_name, links=n_links if switch_wide else 0), end_box(b, finding, b_name)]
    rest = {k: v for k, v in ev.items() if k not in ("a", "b")}
    if rest:
        label = " · ".join(f"{k} ({n_links})" if k == "links" and n_links else k.replace("_", " ") for k in rest)
        boxes.append(EvidenceBox(label, None, dumps(rest), wide=True))
    return boxes


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

    env = Environment(
        loader=PackageLoader("unifab.report"),
        autoescape=select_autoescape(["html", "j2"]),
        finalize=_finalize,
    )
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
        evidence_boxes=evidence_boxes,
        csp=content_security_policy(),
        # The report's own constant, not device data: the one string the template does not escape.
        script=Markup(SCRIPT),
    )


def _finalize(value: Any) -> Any:
    """Every ``{{ ... }}`` of the template: device text with its control characters made visible (newlines
    and tabs kept: commands and evidence are ``<pre>`` blocks); the report's own markup passes as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return display(value, keep="\n\t")
    return value


def write_html(path: Path, html: str) -> None:
    """Write via a temporary file and rename, so a reader never sees half a report."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(path)
