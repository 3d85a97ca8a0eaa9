"""Device text (an LLDP system name, a port id) carrying terminal escapes reaches no table, line, HTML report
or SVG as raw control characters: one helper (``unifab.report.text``) shows them as visible escapes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from unifab.report.text import cell, display

UNIFAB = [sys.executable, "-m", "unifab.cli"]
# clear screen, an OSC 8 hyperlink, an OSC 52 clipboard write, a carriage return, Rich markup, a bidi override
HOSTILE_NAME = "evil\x1b[2J\x1b]8;;http://x.invalid\x07click\x1b]8;;\x07\x1b]52;c;cm0gLXJmIH4=\x07\r[bold]x[/]\u202e"
HOSTILE_PORT = "Ethernet0\x1b[31m\x9b1m"
RAW = ("\x1b", "\x07", "\r", "\x9b", "\u202e")


def test_display_makes_every_control_character_visible() -> None:
    assert display("leaf-01 Ethernet0/1 ↔ gpu") == "leaf-01 Ethernet0/1 ↔ gpu"  # printable text is untouched
    assert display("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert display("a\nb\tc\r") == "a\\x0ab\\x09c\\x0d"
    assert display("a\nb\tc", keep="\n\t") == "a\nb\tc"
    assert display("x\u202ey\u2028z\U000e0001") == "x\\u202ey\\u2028z\\U000e0001"
    assert not any(c in display(HOSTILE_NAME) for c in RAW)
    assert cell("[bold]x[/]") == "\\[bold]x\\[/]"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A twin whose first host's LLDP names a hostile switch and port on eth0."""
    from unifab.twin.generate import generate

    bundle = tmp_path_factory.mktemp("esc") / "b"
    generate(bundle, gpus=8)
    lldp = bundle / "hosts" / "gpu001" / "cmd" / "lldpcli.json"
    doc = json.loads(lldp.read_text())
    iface = doc["lldp"][0]["interface"][0]
    iface["chassis"][0]["name"][0]["value"] = HOSTILE_NAME
    iface["port"][0]["id"][0]["value"] = HOSTILE_PORT
    lldp.write_text(json.dumps(doc))
    return bundle


def _run(*args: str) -> str:
    proc = subprocess.run([*UNIFAB, *args], capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout + proc.stderr


def test_tables_show_the_escapes_instead_of_running_them(hostile: Path, tmp_path: Path) -> None:
    outputs = {
        "check": _run("check", str(hostile), "-q", "--limit", "0"),
        "topo diff": _run("topo", "diff", str(hostile), "-q"),
        "topo show": _run("topo", "show", str(hostile), "-q", "--rail-map", str(tmp_path / "rails.svg")),
    }
    assert "evil\\x1b[2J" in outputs["check"], outputs["check"]  # the name is there, visibly escaped
    for name, text in outputs.items():
        assert not any(c in text for c in RAW), name
    svg = (tmp_path / "rails.svg").read_text()
    assert not any(c in svg for c in RAW)


def test_the_html_report_shows_the_escapes(hostile: Path, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    _run("check", str(hostile), "-q", "--html", str(html))
    page = html.read_text()
    assert "evil\\x1b[2J" in page or "evil\\u001b[2J" in page
    assert not any(c in page for c in RAW)


def test_json_keeps_the_evidence_exactly(hostile: Path) -> None:
    """JSON escapes control characters itself: the name arrives byte for byte, as evidence."""
    text = _run("check", str(hostile), "-q", "--format", "json")
    assert "\x1b" not in text
    messages = [f["message"] for f in json.loads(text)["findings"]]
    assert any(HOSTILE_NAME in m for m in messages)


def test_render_html_escapes_control_characters_in_every_field() -> None:
    from unifab.model import Finding, Severity
    from unifab.report.html import render_html

    f = Finding(
        check="TOPO-UNPLANNED",
        severity=Severity.WARNING,
        subject={"kind": "link", "a": HOSTILE_NAME, "b": "gpu001:eth0"},
        message=f"{HOSTILE_NAME}:{HOSTILE_PORT} is cabled to gpu001:eth0",
        evidence={"a": {"device": HOSTILE_NAME, "port": HOSTILE_PORT}, "b": {"device": "gpu001", "netdev": "eth0"}},
        fix=(),
    )
    page = render_html(HOSTILE_NAME, [f], {"TOPO-UNPLANNED": (HOSTILE_NAME, "why")}, {"hosts": 1})
    assert not any(c in page for c in RAW)
    assert "evil\\x1b[2J" in page
