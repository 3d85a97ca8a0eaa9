"""HTML report: evidence boxes captioned with device and end, expand/collapse all, self-contained, escaped."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from unifab.checks.registry import registry
from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Finding, Fix, Severity
from unifab.report.html import SCRIPT, evidence_boxes, render_html, script_hash

if TYPE_CHECKING:
    from conftest import Chromium  # tests/report/conftest.py: the ``chromium`` fixture

HOSTILE = "<img src=x onerror=alert(1)>"
SCRIPTY = "<script>alert(2)</script>"


class Dom(HTMLParser):
    """Tags with their attributes, and the text of each figcaption, of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.captions: list[str] = []
        self.scripts: list[str] = []
        self._caption: list[str] | None = None
        self._script: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "figcaption":
            self._caption = []
        elif tag == "script":
            self._script = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "figcaption" and self._caption is not None:
            self.captions.append("".join(self._caption))
            self._caption = None
        elif tag == "script" and self._script is not None:
            self.scripts.append("".join(self._script))
            self._script = None

    def handle_data(self, data: str) -> None:
        for buf in (self._caption, self._script):
            if buf is not None:
                buf.append(data)

    def count(self, tag: str, **attrs: str) -> int:
        return sum(t == tag and all(a.get(k) == v for k, v in attrs.items()) for t, a in self.tags)


def parse(html: str) -> Dom:
    dom = Dom()
    dom.feed(html)
    dom.close()
    return dom


def _specs() -> dict[str, tuple[str, str]]:
    return {spec.id: (spec.title, spec.why) for spec in registry().values()}


def _render(findings: list[Finding], bundle: str = "b") -> str:
    return render_html(bundle, findings, _specs(), {"hosts": 1})


def _finding(evidence: dict[str, Any], subject: dict[str, str] | None = None, **kw: Any) -> Finding:
    return Finding("QOS-MTU", Severity.ERROR, subject or {"kind": "link"}, kw.pop("message", "m"), evidence, **kw)


@pytest.fixture(scope="module")
def twin_report(twin_bundle: Path) -> tuple[list[Finding], str]:
    findings = run_checks(load_bundle(twin_bundle))
    return findings, _render(findings, str(twin_bundle))


def test_evidence_boxes_name_device_and_end() -> None:
    host_link = _finding(
        {
            "a": {"device": "gpu001", "nic": "nic:gpu001:mlx5_3", "netdev": "eth3", "mtu": 9000},
            "b": {"device": "leaf-su1-r3", "port": "port:leaf-su1-r3:Ethernet12", "mtu": 1500},
        }
    )
    assert [b.caption for b in evidence_boxes(host_link)] == [
        "gpu001 · eth3 / mlx5_3 (host end)",
        "leaf-su1-r3 · Ethernet12 (switch end)",
    ]
    # Topology evidence names bare ports and netdevs, and carries plan/discovered beside the ends.
    cable = _finding(
        {
            "a": {"device": "gpu017", "netdev": "eth4", "plan_peer": "leaf-su1-r4:Ethernet128"},
            "b": {"device": "leaf-su1-r4", "port": "Ethernet128", "plan_peer": "gpu017:eth4"},
            "plan": ["gpu017:eth4 -- leaf-su1-r4:Ethernet128"],
            "discovered": [],
        }
    )
    boxes = evidence_boxes(cable)
    assert [b.caption for b in boxes] == [
        "gpu017 · eth4 (host end)",
        "leaf-su1-r4 · Ethernet128 (switch end)",
        "plan · discovered",
    ]
    assert boxes[2].wide and '"plan"' in boxes[2].body and '"a"' not in boxes[2].body
    degraded = _finding({"a": {"device": "gpu032", "nic": "nic:gpu032:mlx5_1"}, "b": {"device": "s", "port": "p"}})
    assert evidence_boxes(degraded)[0].caption == "gpu032 · mlx5_1 (host end)"
    # A NIC without an RDMA device: its id is its netdev, named once.
    bare = _finding({"a": {"device": "h", "nic": "nic:h:eth0", "netdev": "eth0"}, "b": {"device": "s", "port": "p"}})
    assert evidence_boxes(bare)[0].caption == "h · eth0 (host end)"
    # A switch-wide finding: the switch's shared setting, the NICs of every link.
    shared = _finding(
        {"a": {"trust": "dscp"}, "b": {"device": "leaf-su1-r2", "tc": 1}, "links": ["link:x", "link:y"]},
        subject={"kind": "switch", "id": "switch:leaf-su1-r2", "config": "DSCP_TO_TC_MAP|ROCE"},
    )
    assert [b.caption for b in evidence_boxes(shared)] == [
        "NICs of the 2 links (host end)",
        "leaf-su1-r2 · DSCP_TO_TC_MAP|ROCE (switch end)",
        "links (2)",
    ]
    uplinks = _finding(
        {"a": {"device": "leaf-su1-r3", "downlinks": 8}, "b": {"device": "leaf-su1-r3", "uplinks_up": 6}},
        subject={"kind": "switch", "id": "switch:leaf-su1-r3"},
    )
    assert [b.caption for b in evidence_boxes(uplinks)] == ["leaf-su1-r3 (switch)", "leaf-su1-r3 (switch)"]
    job = _finding({"a": {"job": "job:slurm:7", "nccl_ib_tc": None}, "b": {"fabric_roce_dscp": 26}})
    assert [b.caption for b in evidence_boxes(job)] == ["job:slurm:7 (job)", "fabric"]
    assert [b.caption for b in evidence_boxes(_finding({"device": "gpu3", "x": 1}))] == ["gpu3"]
    assert evidence_boxes(_finding({})) == []


def test_twin_report_captions_every_box(twin_report: tuple[list[Finding], str]) -> None:
    """On a twin with every scenario: each box has a caption, each host link names both of its ends."""
    findings, html = twin_report
    dom = parse(html)
    n_boxes = sum(len(evidence_boxes(f)) for f in findings)
    assert n_boxes and dom.count("figure", **{"class": "box"}) + dom.count("figure", **{"class": "box wide"}) == n_boxes
    assert len(dom.captions) == n_boxes and all(c.strip() for c in dom.captions)
    captions = set(dom.captions)
    linked = [f for f in findings if "nic" in f.evidence.get("a", {}) and "port" in f.evidence.get("b", {})]
    assert linked
    for f in linked:
        a, b = f.evidence["a"], f.evidence["b"]
        nic = " / ".join(dict.fromkeys(n for n in (a.get("netdev"), a["nic"].rpartition(":")[2]) if n))
        assert f"{a['device']} · {nic} (host end)" in captions
        assert f"{b['device']} · {b['port'].rpartition(':')[2]} (switch end)" in captions
    assert dom.count("details", **{"class": "finding"}) == len(findings)


def test_report_is_self_contained(twin_report: tuple[list[Finding], str]) -> None:
    """No external asset; one inline script, the only one the page's Content-Security-Policy allows."""
    _, html = twin_report
    dom = parse(html)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert dom.count("link") == 0 and all("src" not in attrs for tag, attrs in dom.tags if tag == "script")
    assert dom.scripts == [SCRIPT]
    digest = base64.b64encode(hashlib.sha256(dom.scripts[0].encode()).digest()).decode()
    (csp,) = [a["content"] for t, a in dom.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp is not None and f"script-src 'sha256-{digest}';" in csp and "default-src 'none'" in csp
    assert f"'sha256-{digest}'" == script_hash()
    # The toolbar: hidden until the script shows it, so a reader without script sees no dead buttons.
    (toolbar,) = [a for t, a in dom.tags if a.get("id") == "toggles"]
    assert "hidden" in toolbar
    assert dom.count("button", **{"data-open": "true"}) == dom.count("button", **{"data-open": "false"}) == 1


def _hostile_findings() -> list[Finding]:
    return [
        Finding(
            "QOS-MTU",
            Severity.CRITICAL,
            {"kind": "link", "a": f"{HOSTILE}:eth0", "b": f"sw:{SCRIPTY}"},
            f"MTU mismatch on {HOSTILE} {SCRIPTY}",
            {
                "a": {"device": HOSTILE, "nic": f"nic:{HOSTILE}:mlx5_0", "netdev": SCRIPTY, "mtu": 9000},
                "b": {"device": f"leaf{SCRIPTY}", "port": HOSTILE, "mtu": 1500},
                "plan": [f"{HOSTILE} -- x"],
            },
            fix=(Fix(HOSTILE, (f"sudo config interface mtu {SCRIPTY} 9100",)),),
            impact={"summary": f"drops on {HOSTILE}"},
        ),
        Finding("X-<b>BOLD</b>", Severity.INFO, {}, "m", {"device": HOSTILE, "note": SCRIPTY}),
    ]


def test_hostile_device_names_are_escaped() -> None:
    html = render_html(f"/tmp/{SCRIPTY}", _hostile_findings(), {"QOS-MTU": (HOSTILE, SCRIPTY)}, {HOSTILE: 1})
    assert HOSTILE not in html and SCRIPTY not in html and "<b>BOLD" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;script&gt;alert(2)&lt;/script&gt;" in html
    dom = parse(html)
    assert dom.count("img") == 0 and "X-&lt;b&gt;BOLD&lt;/b&gt;" in html
    assert dom.scripts == [SCRIPT]  # no script but the report's own
    assert not any(k.startswith("on") for _, attrs in dom.tags for k in attrs)
    assert f"{HOSTILE} · {SCRIPTY} / mlx5_0 (host end)" in dom.captions
    assert f"leaf{SCRIPTY} · {HOSTILE} (switch end)" in dom.captions


def test_no_findings_has_no_toolbar() -> None:
    html = _render([])
    assert "No findings: every check passed." in html and 'id="toggles"' not in html
    assert parse(html).scripts == [SCRIPT]  # the script returns early: nothing to toggle


# --- in a real browser -------------------------------------------------------------------------------------


def _with_script(html: str, js: str) -> str:
    """A test copy of the report with ``js`` run after the report's own script (and allowed by its CSP, if any)."""
    assert html.count("script-src ") <= 1 and html.count("</body>") == 1
    html = html.replace("script-src ", f"script-src {script_hash(js)} ", 1)
    return html.replace("</body>", f"<script>{js}</script>\n</body>", 1)


CLICK = 'document.querySelector("#toggles button[data-open={}]").click();'


def _details(dom: str) -> list[bool]:
    """Whether each finding's <details> is open in a serialized DOM."""
    return ["open" in attrs for tag, attrs in parse(dom).tags if tag == "details"]


def test_chromium_expand_and_collapse_all(
    twin_report: tuple[list[Finding], str], tmp_path: Path, chromium: Chromium
) -> None:
    """Load the report in headless Chromium under its own CSP, click the buttons, read the DOM back."""
    findings, html = twin_report
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    untouched = chromium.dump_dom(page)
    assert _details(untouched) == [False] * len(findings)
    toolbar = [a for t, a in parse(untouched).tags if a.get("id") == "toggles"]
    assert toolbar and "hidden" not in toolbar[0]  # the script ran: CSP allowed it

    page.write_text(_with_script(html, CLICK.format("true")), encoding="utf-8")
    assert _details(chromium.dump_dom(page)) == [True] * len(findings)

    page.write_text(_with_script(html, CLICK.format("true") + CLICK.format("false")), encoding="utf-8")
    assert _details(chromium.dump_dom(page)) == [False] * len(findings)

    png = tmp_path / "report.png"
    page.write_text(_with_script(html, CLICK.format("true")), encoding="utf-8")
    chromium.screenshot(page, png, "1400,1000")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_chromium_hostile_names_stay_text(tmp_path: Path, chromium: Chromium) -> None:
    """Escaping alone holds in a browser: with the CSP removed, nothing hostile runs or becomes an element."""
    html = render_html("b", _hostile_findings(), {}, {})
    csp = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n')
    assert csp.search(html)
    trap = "window.alert = function (x) { document.documentElement.setAttribute('data-pwned', String(x)); };"
    html = csp.sub(f"<script>{trap}</script>\n", html, count=1)
    page = tmp_path / "hostile.html"

    def pwned(dom: Dom) -> str | None:
        return next(a.get("data-pwned") for t, a in dom.tags if t == "html")

    # The trap works: the same name pasted unescaped runs its onerror.
    page.write_text(html.replace("</body>", f"{HOSTILE}</body>", 1), encoding="utf-8")
    assert pwned(parse(chromium.dump_dom(page))) == "1"

    page.write_text(_with_script(html, CLICK.format("true")), encoding="utf-8")
    dom = parse(chromium.dump_dom(page))
    assert pwned(dom) is None
    assert dom.count("img") == 0 and len(dom.scripts) == 3  # the trap, the report's, the click
    assert f"{HOSTILE} · {SCRIPTY} / mlx5_0 (host end)" in dom.captions
    assert ["open" in a for t, a in dom.tags if t == "details"] == [True, True]
