"""The public surface is declared: ``unifab`` re-exports ``unifab.api``, every module names its public names."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import unifab
from unifab import api

SRC = Path(__file__).resolve().parents[1] / "src" / "unifab"

PINNED = [
    "PLATFORMS",
    "BundleError",
    "CheckSpec",
    "DeviceOrigin",
    "DirectorySource",
    "Fabric",
    "FabricPlan",
    "Finding",
    "FindingDoc",
    "FindingsDocument",
    "Fix",
    "Intent",
    "IntentError",
    "MemorySource",
    "ParseError",
    "Platform",
    "Session",
    "Severity",
    "Snapshot",
    "Source",
    "SourcePath",
    "UnifabError",
    "Update",
    "UsageError",
    "check_catalog",
    "findings_document",
    "load_bundle",
    "load_intent",
    "load_snapshot",
    "open_source",
    "parse_intent",
    "render_intent",
    "run_checks",
    "topology_diff",
]


def test_the_api_is_pinned() -> None:
    """Changing the public API is a decision: update PINNED (and docs/architecture.md) with it."""
    assert api.__all__ == PINNED
    assert list(unifab.__all__) == ["__version__", *PINNED]
    for name in PINNED:
        assert getattr(unifab, name) is getattr(api, name), name


def test_the_command_line_does_not_import_the_api() -> None:
    code = "import sys, unifab.cli; print('unifab.api' in sys.modules, 'unifab.checks.runner' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_every_module_declares_all() -> None:
    missing = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        if "__all__" not in names:
            missing.append(path.relative_to(SRC).as_posix())
    assert missing == []


def test_a_notebook_can_check_a_bundle(twin_bundle: Path) -> None:
    snap = unifab.load_snapshot(twin_bundle)
    findings = unifab.run_checks(snap.fabric)
    doc = unifab.findings_document("b", findings)
    assert doc["summary"]["findings"] == len(findings) > 0
    assert {f["check"] for f in doc["findings"]} >= {"QOS-PFC-MISMATCH", "TOPO-MISSING"}
    assert all(f.check.startswith("TOPO-") or f.check == "COVERAGE" for f in unifab.topology_diff(snap.fabric))
