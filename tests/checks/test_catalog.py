"""The committed check catalog is the one the registry generates."""

from __future__ import annotations

from pathlib import Path

from unifab.checks.catalog import render_markdown
from unifab.checks.registry import registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def test_docs_catalog_is_current() -> None:
    assert DOC.read_text() == render_markdown(), "regenerate: python -m unifab.checks.catalog > docs/checks.md"


def test_every_check_has_text_and_v1_ids_exist() -> None:
    specs = registry()
    assert {"QOS-PFC-MISMATCH", "QOS-DSCP-MAP", "QOS-ECN-OFF", "QOS-MTU", "INPUT-UNREADABLE", "INPUT-MISSING"} <= set(
        specs
    )
    assert all(s.title and s.why and s.fix for s in specs.values())
