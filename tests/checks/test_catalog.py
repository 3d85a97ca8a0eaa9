"""The committed check catalog is the one the registry generates."""

from __future__ import annotations

from pathlib import Path

from unifab.checks.catalog import render_markdown
from unifab.checks.coverage import COVERAGE
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


def test_every_registered_check_says_its_link_tiers() -> None:
    """A check added to the registry needs its COVERAGE entry (link tiers, buffer model); none is left over."""
    ids = set(registry())
    assert not ids - set(COVERAGE), f"no COVERAGE entry in unifab/checks/coverage.py: {sorted(ids - set(COVERAGE))}"
    assert not set(COVERAGE) - ids, f"COVERAGE entries for unregistered checks: {sorted(set(COVERAGE) - ids)}"
    assert all(c.buffer for c in (COVERAGE["QOS-HEADROOM"],))  # the buffer check names its model and formula


def test_catalog_shows_tiers_and_the_buffer_model() -> None:
    doc = render_markdown()
    for check_id, cov in COVERAGE.items():
        section = doc.split(f"## `{check_id}`\n", 1)[1].split("\n## ", 1)[0]
        assert f"**Link tiers:** {', '.join(cov.tiers)}" in section, check_id
        assert ("**Buffer model:**" in section) == bool(cov.buffer), check_id
    headroom = doc.split("## `QOS-HEADROOM`", 1)[1].split("\n## ", 1)[0]
    assert "pg_profile_lookup.ini" in headroom and "LOSSLESS_TRAFFIC_PATTERN" in headroom and "9978" in headroom
